"""Which network addresses deepsearcher may connect to on a caller's behalf (crawler, Firecrawl results, HTTP server).

One rule for every outgoing request a URL from outside can cause: a host name is resolved **once**, every address it
resolves to is classified, and the connection is made to one of those vetted addresses (see
``deepsearcher.net.http``, which applies this at connect time, so DNS rebinding between a check and the
connect cannot happen). Unless private addresses are allowed, these are refused:

- IPv4: "this network" 0/8, private 10/8, 172.16/12, 192.168/16, shared (CGNAT) 100.64/10, loopback 127/8,
  link-local 169.254/16 (cloud metadata services), IETF protocol assignments 192.0.0/24, documentation 192.0.2/24,
  198.51.100/24, 203.0.113/24, 6to4 relay anycast 192.88.99/24, benchmarking 198.18/15, multicast 224/4, reserved
  240/4 and the broadcast address;
- IPv6: unspecified ::, loopback ::1, unique local fc00::/7, link-local fe80::/10, site-local fec0::/10, multicast
  ff00::/8, documentation 2001:db8::/32 and 3fff::/20, discard 100::/64, NAT64 local-use 64:ff9b:1::/48, IETF
  protocol assignments 2001::/23 (Teredo 2001::/32 included), and everything outside global unicast 2000::/3;
- IPv4 inside IPv6: IPv4-mapped ``::ffff:a.b.c.d``, NAT64 ``64:ff9b::a.b.c.d`` and 6to4 ``2002:aabb:ccdd::`` are
  judged by the IPv4 address they carry (that is where the packets end up); IPv4-compatible ``::a.b.c.d``
  (deprecated) is always refused;
- anything else ``ipaddress`` does not call global.

Sources: the IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890), RFC 6598 (CGNAT), RFC 6052 and
RFC 8215 (NAT64), RFC 3056 (6to4), RFC 4380 (Teredo), RFC 9637 (3fff::/20). The tables are explicit rather than only
``ipaddress.is_global`` because its lists changed between Python 3.10 and 3.13 (e.g. 64:ff9b::/96 and multicast are
"global" to it).
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from typing import Callable, Sequence
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Sequence[str]]
"""``resolver(host, port) -> address literals`` (IPv6 ones may carry a ``%scope``); raises OSError when unresolvable."""

_V4 = [(ipaddress.IPv4Network(net), why) for net, why in (
    ("0.0.0.0/8", "unspecified ('this network')"), ("10.0.0.0/8", "private"),
    ("100.64.0.0/10", "shared address space (CGNAT)"), ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local, cloud metadata"), ("172.16.0.0/12", "private"),
    ("192.0.0.0/24", "IETF protocol assignment"), ("192.0.2.0/24", "documentation"),
    ("192.88.99.0/24", "6to4 relay anycast"), ("192.168.0.0/16", "private"), ("198.18.0.0/15", "benchmarking"),
    ("198.51.100.0/24", "documentation"), ("203.0.113.0/24", "documentation"), ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved"),  # includes the broadcast address 255.255.255.255
)]
_V6 = [(ipaddress.IPv6Network(net), why) for net, why in (
    ("::/128", "unspecified"), ("::1/128", "loopback"), ("fc00::/7", "private (unique local)"),
    ("fe80::/10", "link-local"), ("fec0::/10", "site-local"), ("ff00::/8", "multicast"),
    ("2001:db8::/32", "documentation"), ("3fff::/20", "documentation"), ("100::/64", "discard-only"),
    ("64:ff9b:1::/48", "NAT64 local-use"), ("2001::/32", "Teredo (tunnelled IPv4)"),
    ("2001::/23", "IETF protocol assignment"),
)]
_GLOBAL_UNICAST_V6 = ipaddress.IPv6Network("2000::/3")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_V4_COMPATIBLE = ipaddress.IPv6Network("::/96")


def classify(address: IPAddress) -> str | None:
    """Why ``address`` is not a public one (e.g. "loopback", "IPv4-mapped loopback"), or None when it is public."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            form, v4 = embedded
            why = classify(v4)
            if why:
                return f"{form} {why}"
            return "IPv4-compatible (deprecated, RFC 4291)" if form == "IPv4-compatible" else None
        for net6, why in _V6:
            if address in net6:
                return why
        if address not in _GLOBAL_UNICAST_V6:
            return "reserved (outside global unicast 2000::/3)"
    else:
        for net, why in _V4:
            if address in net:
                return why
    if not address.is_global or address.is_multicast or address.is_reserved:
        return "not globally routable"
    return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    """The IPv4 address an IPv6 transition form carries, with the form's name; None for other addresses."""
    if address.ipv4_mapped is not None:
        return "IPv4-mapped", address.ipv4_mapped
    if address in _NAT64:
        return "NAT64", ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return "6to4", address.sixtofour
    if address in _V4_COMPATIBLE and int(address) > 1:  # not :: or ::1, which the table names
        return "IPv4-compatible", ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


class AddressRefused(Exception):
    """A host resolved to an address the policy refuses; nothing was sent to it.

    Attributes:
        host: the host name (or literal) of the URL.
        address: the refused address it resolved to.
        reason: what kind of address it is ("loopback", "link-local, cloud metadata", ...).
    """

    def __init__(self, host: str, address: str, reason: str) -> None:
        where = host.strip("[]") if _same_address(host, address) else f"{host} resolves to {address}"
        super().__init__(f"refused: {where} ({reason}); private and internal addresses are not fetched unless "
                         "allow_private_urls is on")
        self.host = host
        self.address = address
        self.reason = reason


def _same_address(host: str, address: str) -> bool:
    """Whether a URL's host is the address literal itself (``[::ffff:127.0.0.1]`` is ``::ffff:7f00:1``)."""
    try:
        return ipaddress.ip_address(host.strip("[]").split("%")[0]) == ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return False


def system_resolver(host: str, port: int) -> list[str]:
    """Addresses of ``host`` from the system resolver (``socket.getaddrinfo``, TCP), in its order, without repeats.

    Numeric forms glibc accepts (``2130706433``, ``0x7f.1``, ``0``) come back as the addresses they denote, so they
    are classified like any other. Raises OSError (``socket.gaierror``) when the host does not resolve.
    """
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True)
class AddressPolicy:
    """Resolve hosts once and refuse non-public addresses (see the module rules) unless ``allow_private``.

    Attributes:
        allow_private: connect to any address (the local user's own crawls); False = refuse non-public ones.
        resolver: ``resolver(host, port) -> address literals``; None = ``system_resolver``. Tests inject one.
        classifier: ``classifier(address) -> reason or None``; ``classify`` unless a test declares a local address
            public to stand in for an internet host.
    """

    allow_private: bool = False
    resolver: Resolver | None = None
    classifier: Callable[[IPAddress], str | None] = classify

    def resolve(self, host: str, port: int) -> list[str]:
        """Address literals of ``host`` (an IP literal is its own address). Raises OSError when unresolvable."""
        name = host.strip("[]")
        try:
            return [str(ipaddress.ip_address(name.split("%")[0]))] if "%" not in name else [name]
        except ValueError:
            pass
        addresses = list((self.resolver or system_resolver)(name, port))
        if not addresses:
            raise socket.gaierror(socket.EAI_NONAME, f"{name} has no address")
        return addresses

    def vet(self, host: str, port: int) -> list[str]:
        """Resolve ``host`` once and return the addresses to connect to, all of them allowed.

        One refused address refuses the host: a name that mixes public and internal addresses is not one to trust.

        Raises:
            AddressRefused: an address the host resolves to is refused.
            OSError: the host does not resolve.
        """
        addresses = self.resolve(host, port)
        if self.allow_private:
            return addresses
        for literal in addresses:
            why = self.classifier(ipaddress.ip_address(literal.split("%")[0]))
            if why is not None:
                raise AddressRefused(host, literal, why)
        return addresses

    def check_url(self, url: str) -> list[str]:
        """``vet`` the host of an http(s) URL (port 80/443 unless given); used where we do not connect ourselves.

        Raises:
            ValueError: not an http(s) URL with a host, or a malformed port.
            AddressRefused: the host resolves to a refused address.
            OSError: the host does not resolve.
        """
        parts = urlsplit(url)
        if parts.scheme.lower() not in {"http", "https"} or not parts.hostname:
            raise ValueError(f"not an http(s) URL with a host: {url}")
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
        return self.vet(parts.hostname, port)

    @classmethod
    def from_setting(cls, allow_private_urls: bool | None, *, default: bool) -> "AddressPolicy":
        """The policy for an ``allow_private_urls`` setting, where None means ``default``."""
        return cls(allow_private=default if allow_private_urls is None else allow_private_urls)
