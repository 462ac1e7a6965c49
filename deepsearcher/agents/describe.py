"""Collections describe themselves (issue #13): routing picks collections by their description, and users often load
without ``-d``.

``describe_collection`` samples the chunks that open a document (``VectorStore.sample``: titles and opening text),
then asks the LLM for a one- or two-sentence description in the documents' language (one call,
``prompts.DESCRIBE_COLLECTION``). Without an LLM, or when the call fails or its reply is unusable, the description is
built from the file names and titles (``files_description``): routing still has something to go on, and the load
summary says how to improve it. Either way it is stored marked as generated.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Iterable, Sequence
from urllib.parse import urlsplit

from deepsearcher.agents import prompts
from deepsearcher.errors import ConfigError, DeepSearcherError, without_hint
from deepsearcher.llm.output import ask_text
from deepsearcher.protocols import ChatModel, VectorStore
from deepsearcher.types import Chunk, CollectionDescription

log = logging.getLogger(__name__)

#: Chunks read from the store (document openings).
SAMPLE_CHUNKS = 200
MAX_NAMES = 20
MAX_EXCERPTS = 6
EXCERPT_CHARS = 300
#: A description longer than this is cut at a sentence (or word) end.
MAX_DESCRIPTION_CHARS = 400
#: ... and the file-based one holds at most this many characters.
FILES_DESCRIPTION_CHARS = 300


@dataclass(frozen=True)
class CollectionSample:
    """What a description is written from: distinct file names, titles and headings, and a few excerpts (one per
    file first), each in store order."""

    files: list[str]
    titles: list[str]
    headings: list[str]
    excerpts: list[str]


def sample_collection(store: VectorStore, name: str) -> CollectionSample:
    """Read up to ``SAMPLE_CHUNKS`` document openings of ``name`` and pick names, titles, headings and excerpts.

    Raises:
        CollectionError: no such collection.
    """
    chunks = store.sample(name, SAMPLE_CHUNKS)
    files = _distinct(display_name(c.source) for c in chunks)
    titles = _distinct(c.title.strip() for c in chunks if c.title.strip() and c.title.strip() not in files
                       and PurePosixPath(c.source).stem != c.title.strip())
    headings = _distinct(h for c in chunks for h in _headings(c.text))
    return CollectionSample(files[:MAX_NAMES], titles[:MAX_NAMES], headings[:MAX_NAMES], _excerpts(chunks))


def describe_collection(store: VectorStore, name: str, llm: ChatModel | None, *, no_llm_note: str = "",
                        keep_given: bool = False) -> CollectionDescription:
    """Write and store a generated description of ``name``: by ``llm`` when given, else from file names and titles.

    Args:
        store: the vector store.
        name: an existing collection.
        llm: the chat model, or None.
        no_llm_note: why there is no LLM (shown in the load summary), when ``llm`` is None.
        keep_given: never replace a description a user set (``--set``) by one from file names: when the LLM cannot
            write the new one, raise instead and leave the user's text stored.

    Returns:
        The stored description with its origin ("llm" or "files") and, for "files", why the LLM did not write it.

    Raises:
        CollectionError: no such collection. (LLM failures fall back to "files", unless ``keep_given``.)
        DeepSearcherError: ``keep_given``, the description was set by a user and the LLM could not write a new one.
    """
    if keep_given and llm is None:
        raise kept_given(name, no_llm_note or "no LLM is configured")
    sample = sample_collection(store, name)
    note = no_llm_note
    if llm is not None:
        try:
            text = llm_description(llm, sample)
        except DeepSearcherError as exc:
            if not keep_given:
                log.warning("describing %s: the LLM failed (%s); describing it from file names and titles", name,
                            exc)
            text, note = "", f"the LLM failed: {without_hint(exc)}"
        else:
            note = "" if text else "the LLM's reply was unusable (empty, or a copy of the prompt)"
        if text:
            store.set_description(name, text, generated=True)
            return CollectionDescription(name, text, "llm")
    if keep_given:
        raise kept_given(name, note)
    text = files_description(sample) or f"Documents in {name}"
    store.set_description(name, text, generated=True)
    return CollectionDescription(name, text, "files", note)


def kept_given(name: str, why: str) -> ConfigError:
    """The error of a refresh that would replace a user's description by one from file names (``why``: why the LLM
    did not write it)."""
    return ConfigError(f"kept the description you set for {name!r}: the LLM could not write a new one ({why}), and "
                       "one from file names would replace yours",
                       hint="fix the llm: block of config.yaml and run --refresh again, or change the text with --set")


def llm_description(llm: ChatModel, sample: CollectionSample) -> str:
    """One LLM call: the description of ``sample`` (``prompts.DESCRIBE_COLLECTION``), cleaned; "" when unusable.

    Raises:
        ProviderError: the server failed (after its retries).
    """
    prompt = prompts.DESCRIBE_COLLECTION.format(
        files=", ".join(sample.files) or "(none)", titles="; ".join(sample.titles) or "(none)",
        headings="; ".join(sample.headings) or "(none)",
        excerpts="\n\n".join(f"- {e}" for e in sample.excerpts) or "(none)")
    reply = ask_text(llm, prompts.messages(prompt))
    text = clean_description(reply.text)
    if reply.finish_reason == "length":  # cut at max_tokens: only whole sentences are used
        ends = [m.end() for m in re.finditer(r"[.!?。！？](?=\s|$)", text)]
        text = text[:ends[-1]] if ends else ""
    return text


def clean_description(text: str) -> str:
    """The model's reply as one line: a leading label ("Description:") and wrapping quotes removed, Markdown emphasis
    dropped, cut at a sentence end within ``MAX_DESCRIPTION_CHARS``; "" for an empty or placeholder reply."""
    text = " ".join(text.replace("**", "").replace("__", "").split())
    text = re.sub(r"^(?:collection\s+)?description\s*[:：]\s*", "", text, flags=re.I)
    text = text.strip().strip("\"'“”«»").strip()
    if prompts.is_placeholder(text) or any(echo in text for echo in _PROMPT_ECHOES):
        return ""  # small models sometimes repeat the prompt instead of answering
    if len(text) > MAX_DESCRIPTION_CHARS:
        cut = text[:MAX_DESCRIPTION_CHARS]
        end = max(cut.rfind(". "), cut.rfind("。"), cut.rfind("! "), cut.rfind("? "))
        text = cut[:end + 1] if end > MAX_DESCRIPTION_CHARS // 3 else cut.rsplit(" ", 1)[0] + " …"
    return text


#: Pieces of the prompt that a real description never contains.
_PROMPT_ECHOES = (" ".join(prompts.DESCRIBE_COLLECTION.split())[:40], " ".join(prompts.SYSTEM.split())[:40],
                  "<<SYS>>", "[INST]")


def files_description(sample: CollectionSample) -> str:
    """``"Files: a.md, b.pdf, … Titles: Travel policy; Duck; …"`` within ``FILES_DESCRIPTION_CHARS`` ("" when the
    sample is empty)."""
    parts = []
    for label, items, sep in (("Files", sample.files, ", "), ("Titles", sample.titles, "; ")):
        if items:
            parts.append(f"{label}: {_fit(items, sep, FILES_DESCRIPTION_CHARS // 2)}.")
    return " ".join(parts)


def display_name(source: str) -> str:
    """A file's name, or a URL's host and path, as a description shows it."""
    if source.startswith(("http://", "https://")):
        parts = urlsplit(source)
        return (parts.hostname or "") + (parts.path.rstrip("/") or "")
    return PurePosixPath(source).name or source


def _fit(items: Sequence[str], sep: str, limit: int) -> str:
    shown: list[str] = []
    for item in items:
        if len(sep.join([*shown, item])) > limit:
            return sep.join(shown) + (sep if shown else "") + "…"
        shown.append(item)
    return sep.join(shown)


def _headings(text: str) -> list[str]:
    """Markdown headings (``# …``) of a chunk's text."""
    return [m.group(1).strip() for m in re.finditer(r"(?m)^#{1,4}\s+(.+)$", text)]


def _excerpts(chunks: Sequence[Chunk]) -> list[str]:
    """Up to ``MAX_EXCERPTS`` openings, one per file before a second of any file."""
    by_source: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_source.setdefault(chunk.source, []).append(chunk)
    picked: list[str] = []
    rank = 0
    while len(picked) < MAX_EXCERPTS and any(rank < len(v) for v in by_source.values()):
        for group in by_source.values():
            if rank < len(group) and len(picked) < MAX_EXCERPTS:
                text = " ".join(group[rank].text.split())
                picked.append(text[:EXCERPT_CHARS].rstrip() + (" …" if len(text) > EXCERPT_CHARS else ""))
        rank += 1
    return picked


def _distinct(items: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        if item and item not in seen:
            seen[item] = None
    return list(seen)
