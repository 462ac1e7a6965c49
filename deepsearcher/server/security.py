"""What the HTTP server refuses: callers without the token, paths outside the allowed roots, URLs to private hosts.

The server binds 127.0.0.1 by default. Off loopback it must have a bearer token (read from the environment variable
named by ``server.token_env``) and refuses to start without one. The load endpoint reads server-side paths only
inside ``server.allowed_roots`` (symlinks and ``..`` resolved first), and fetches URLs on loopback, private or
link-local addresses only when the server itself is on loopback (or ``server.allow_private_urls`` says so), so a
caller cannot use the server to read the machine's files or reach hosts behind it.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from deepsearcher.errors import ConfigError
from deepsearcher.net.policy import AddressPolicy, AddressRefused
from deepsearcher.settings import Settings

LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


class Refused(Exception):
    """A request the server will not carry out; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.hint = hint


def configured_endpoints(settings: Settings) -> tuple[tuple[str, str], ...]:
    """``(setting name, value)`` for every provider address in the config (keys ending in ``url`` / ``uri`` in the
    provider sections), each also as its bare ``host:port`` and its password, and for every key its ``*_env``
    variable holds (``$BRAVE_SEARCH_API_KEY``: some providers echo the key in an error), longest value first."""
    found: list[tuple[str, str]] = []

    def visit(prefix: str, value: object) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                visit(f"{prefix}.{key}", item)
        elif isinstance(value, str) and value and prefix.rsplit(".", 1)[-1].endswith(("url", "uri")):
            found.append((prefix, value.rstrip("/") or value))
            parts = urlsplit(value)
            if parts.netloc:
                found.append((prefix, parts.netloc))
            if parts.password:  # user:password@host: the credentials alone too
                found.append((f"{prefix} credentials", parts.password))
        elif isinstance(value, str) and value and prefix.endswith("_env") and len(os.environ.get(value, "")) >= 8:
            found.append((f"${value}", os.environ[value]))  # a key a provider may echo in an error

    for section in ("llm", "embedding", "vector_db", "crawler", "web_search"):
        section_value = getattr(settings, section, None)
        if section_value is not None:
            visit(section, section_value.model_dump())
    if getattr(settings, "vector_db", None) is not None:  # a Lite file as the store names it: its resolved path
        uri = getattr(settings.vector_db.resolved(settings.resolve_path), "uri", None)
        if isinstance(uri, str) and uri:
            found.append(("vector_db.uri", uri))
    return tuple(sorted(set(found), key=lambda item: -len(item[1])))


def is_loopback_host(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and ``localhost`` (not for 0.0.0.0, which listens on every interface)."""
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class AccessPolicy:
    """The server's security settings, resolved once when the app is created.

    Attributes:
        token: the bearer token callers must send, or None when none is required.
        loopback: the server is bound to a loopback address.
        roots: resolved ``server.allowed_roots`` (empty = no server-side path may be loaded).
        allow_private_urls: URLs resolving to loopback/private/link-local addresses may be loaded, as start URLs
            and by every connection the crawler makes for a load this server runs.
        endpoints: configured provider addresses (``llm.base_url``, ``vector_db.uri``, ...) as
            ``(setting name, value)``, hidden from error answers by ``redact``.
    """

    token: str | None
    loopback: bool
    roots: tuple[Path, ...]
    allow_private_urls: bool
    endpoints: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_settings(cls, settings: Settings) -> "AccessPolicy":
        """Resolve the policy.

        Raises:
            ConfigError: the host is not loopback and the token variable is not set (the server must not start).
        """
        server = settings.server
        loopback = is_loopback_host(server.host)
        token = os.environ.get(server.token_env) or None
        if not loopback and token is None:
            raise ConfigError(
                f"refusing to serve on {server.host}: off loopback every request needs a bearer token, and "
                f"${server.token_env} is not set",
                hint=f"export {server.token_env}=<a long random string> (e.g. `python -c 'import secrets; "
                     f"print(secrets.token_urlsafe(32))'`), or serve on 127.0.0.1")
        roots = tuple(settings.resolve_path(root).resolve() for root in server.allowed_roots)
        allow_private = server.allow_private_urls if server.allow_private_urls is not None else loopback
        return cls(token=token, loopback=loopback, roots=roots, allow_private_urls=allow_private,
                   endpoints=configured_endpoints(settings))

    def redact(self, text: str) -> str:
        """``text`` with every configured provider address replaced by its setting's name (``<llm.base_url>``):
        error answers may reach remote callers, and where the LLM or the store lives is the operator's business
        (the server log keeps the full message)."""
        for name, value in self.endpoints:
            text = text.replace(value, f"<{name}>")
        return text

    def check_token(self, authorization: str | None) -> None:
        """Accept the request when no token is required or the ``Authorization: Bearer`` header matches.

        Raises:
            Refused: 401 when the header is missing or wrong.
        """
        if self.token is None:
            return
        scheme, _, given = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            raise Refused(401, "missing bearer token", hint="send the header `Authorization: Bearer <token>`")
        if not hmac.compare_digest(given.strip().encode(), self.token.encode()):
            raise Refused(401, "invalid bearer token")

    def check_path(self, raw: str) -> Path:
        """Resolve a server-side path (a file, folder or glob) and check it lies inside an allowed root.

        ``..`` is refused outright. For a glob, the folder before the first wildcard is checked here, and every file
        the pattern expands to is checked again by ``inside_roots`` (a symlink inside a root may point out of it);
        files outside are then treated as absent. The answer is the same whether an outside path exists or not.

        Raises:
            Refused: 403 when no roots are configured or the path resolves outside them; 422 for a relative path or
                one with a ``..`` component.
        """
        if not self.roots:
            raise Refused(403, "this server does not load server-side paths",
                          hint="set server.allowed_roots in the config to the folders it may read, or load URLs")
        path = Path(raw)
        if not path.is_absolute():
            raise Refused(422, f"{raw!r} is not an absolute path",
                          hint=f"give a path inside {', '.join(map(str, self.roots))}")
        if ".." in path.parts:
            raise Refused(422, f"{raw!r} contains '..'; give the path without it",
                          hint=f"give a path inside {', '.join(map(str, self.roots))}")
        fixed = path
        wildcard = next((i for i, part in enumerate(path.parts) if any(ch in part for ch in "*?[")), None)
        if wildcard is not None and not os.path.lexists(path):  # an existing name with "[" is a name, not a glob
            fixed = Path(*path.parts[:wildcard])
        else:
            wildcard = None
        if not self.inside_roots(fixed):
            raise Refused(403, f"{raw!r} is outside the folders this server may read",
                          hint=f"allowed roots: {', '.join(map(str, self.roots))}")
        return fixed.resolve() / Path(*path.parts[wildcard:]) if wildcard is not None else fixed.resolve()

    def watched_folders(self, settings: Settings) -> list[Path]:
        """``server.watch``'s paths, resolved and checked (before the server starts, and by ``config check``).

        Raises:
            ConfigError: a watched path is not a folder, or lies outside ``server.allowed_roots``.
        """
        folders = []
        for entry in settings.server.watch:
            path = settings.resolve_path(entry.path).resolve()
            if not path.is_dir():
                raise ConfigError(f"server.watch: {path} is not a folder", hint="give existing folders to watch")
            if not self.inside_roots(path):
                raise ConfigError(f"server.watch: {path} is outside server.allowed_roots",
                                  hint="add it (or a folder above it) to server.allowed_roots, or stop watching it")
            folders.append(path)
        return folders

    def inside_roots(self, path: Path) -> bool:
        """True when ``path`` with symlinks and ``..`` resolved is an allowed root or lies below one."""
        real = Path(os.path.realpath(path))
        return any(real == root or root in real.parents for root in self.roots)

    def check_url(self, url: str) -> str:
        """Check an http(s) URL's host is one this server may fetch.

        Raises:
            Refused: 422 for a URL without a host; 403 when the host resolves to an address
                ``netpolicy.AddressPolicy`` refuses (loopback, private, link-local, CGNAT, multicast, reserved, IPv4
                embedded in IPv6, ...) and private URLs are not allowed.
        """
        parts = urlsplit(url)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise Refused(422, f"{url!r} is not an http(s) URL with a host")
        if self.allow_private_urls:
            return url
        try:
            AddressPolicy(allow_private=False).check_url(url)
        except AddressRefused as exc:
            # the kind of address only: naming what an internal name resolves to would turn the refusal into a DNS
            # oracle of the server's network for a remote caller
            raise Refused(403, f"{url!r} points at a non-public address ({exc.reason}); this server does not "
                               "fetch those for its callers",
                          hint="set server.allow_private_urls: true in the config to allow it") from None
        except (OSError, UnicodeError, ValueError):
            return url  # unresolvable or a malformed port: the crawler reports it as a skipped source
        return url
