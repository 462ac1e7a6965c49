"""What to say when a server could not be reached: the root cause of a connection error, and the fix — start the
server or fix the setting when it is on this machine; the network, DNS or proxy when it is a hosted API (there is no
server to start: "start the server" was the hint for api.openai.com failing its DNS lookup)."""

from __future__ import annotations

from urllib.parse import urlsplit

#: words of a failed host-name lookup (glibc, macOS, Windows)
DNS_WORDS = ("name or service not known", "temporary failure in name resolution", "nodename nor servname",
             "getaddrinfo failed", "no address associated")


def root_cause(exc: BaseException) -> str:
    """The message of the innermost ``__cause__`` of ``exc`` ("[Errno 111] Connection refused"), else of ``exc``;
    at most 300 characters."""
    cause: BaseException = exc
    while cause.__cause__ is not None:
        cause = cause.__cause__
    return (str(cause) or str(exc))[:300]


def is_local(where: str) -> bool:
    """``where`` (a URL) is on this machine."""
    host = urlsplit(where).hostname or ""
    return host in {"localhost", "::1", "0.0.0.0"} or host.startswith("127.")


def unreachable_hint(where: str, reason: str, setting: str, docs: str = "") -> str:
    """The fix for the server at ``where`` that could not be reached (``reason``: the connection error; ``setting``:
    the config key holding ``where``; ``docs``: where to read more, appended)."""
    more = f"; {docs}" if docs else ""
    if is_local(where):
        return f"start the server or fix {setting} in the config{more}"
    host = urlsplit(where).hostname or where
    lookup = f"the host name {host} did not resolve: " if any(w in reason.lower() for w in DNS_WORDS) else ""
    return f"{lookup}check this machine's network connection, DNS and proxy (HTTPS_PROXY), and {setting}{more}"
