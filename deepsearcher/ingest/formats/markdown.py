"""Markdown: text as written (it is already plain text), front matter parsed into the title and metadata.

Front matter (YAML between ``---`` lines, TOML between ``+++`` lines, as Jekyll, Hugo, Obsidian and most static site
generators write it) is parsed with python-frontmatter; its ``title`` becomes the Document title and its other
scalar keys go to ``metadata["front_matter"]``, so keys like ``layout: post`` are not stored as chunk text. A block
that does not parse stays in the text (nothing is lost). Data URIs and base64 runs are the normalisation stage's job.
"""

from __future__ import annotations

import datetime
import logging
import re
from typing import Any

from deepsearcher.ingest.formats.text import decode
from deepsearcher.ingest.sections import HEADINGS, markdown_headings
from deepsearcher.types import Document

log = logging.getLogger(__name__)


def extract_markdown(data: bytes, source: str, *, title: str = "", charset: str | None = None) -> list[Document]:
    """Decode a Markdown file and move its front matter into title/metadata.

    Raises:
        SkipSource: undecodable.
    """
    text, encoding = decode(data, charset)
    meta, body = split_front_matter(text)
    fm_title = str(meta.pop("title", "") or "").strip()
    metadata: dict[str, Any] = {"format": "markdown", "encoding": encoding}
    if meta:
        metadata["front_matter"] = {k: _scalar(v) for k, v in meta.items()}
    headings = markdown_headings(body)
    if headings:
        metadata[HEADINGS] = headings  # each chunk gets its heading path (ingest.sections)
    return [Document(text=body, source=source, title=fm_title or title, metadata=metadata)]


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """Return ``(front matter mapping, body)``; ``({}, text)`` when there is none or it does not parse."""
    import frontmatter

    stripped = text.lstrip("\ufeff")
    handler = frontmatter.detect_format(stripped, [frontmatter.YAMLHandler(), _toml_handler()])
    if handler is None:
        return {}, text
    try:
        post = frontmatter.loads(stripped, handler=handler)
    except Exception as exc:  # yaml/toml errors vary by parser; a bad block stays text
        log.debug("front matter not parsed (%s); kept as text", exc)
        return {}, text
    meta = post.metadata if isinstance(post.metadata, dict) else {}
    return dict(meta), post.content


def _scalar(value: Any) -> Any:
    """JSON-serialisable form of a front matter value (dates as ISO strings, nested values as strings)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, list) and all(isinstance(v, (str, int, float, bool)) for v in value):
        return value
    return str(value)


def _toml_handler() -> Any:
    """A python-frontmatter handler for TOML front matter on the standard library's tomllib (python-frontmatter's
    own needs the old ``toml`` package). On Python 3.10 (no tomllib) ``tomli`` is used when installed; without it a
    TOML block does not parse and stays in the text."""
    from frontmatter.default_handlers import BaseHandler

    class TomlHandler(BaseHandler):
        FM_BOUNDARY = re.compile(r"^\+{3}\s*$", re.MULTILINE)
        START_DELIMITER = END_DELIMITER = "+++"

        def detect(self, text: str) -> bool:
            return text.startswith("+++") and super().detect(text)

        def load(self, fm: str, **kwargs: object) -> dict[str, Any]:
            try:
                import tomllib
            except ModuleNotFoundError:  # Python 3.10
                import tomli as tomllib

            return tomllib.loads(fm)

    return TomlHandler()
