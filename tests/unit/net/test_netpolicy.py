"""The address policy on every address form, with resolvers under the test's control (no namespace, no network)."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from deepsearcher.ingest.crawler import same_site
from deepsearcher.net.policy import AddressPolicy, AddressRefused, classify

REFUSED = {
    # IPv4
    "0.0.0.0": "unspecified", "0.1.2.3": "unspecified", "10.1.2.3": "private", "172.16.5.4": "private",
    "172.31.255.255": "private", "192.168.0.1": "private", "100.64.0.1": "CGNAT", "100.127.255.254": "CGNAT",
    "127.0.0.1": "loopback", "127.255.255.254": "loopback", "169.254.169.254": "link-local, cloud metadata",
    "169.254.0.1": "link-local", "192.0.0.8": "IETF protocol", "192.0.2.1": "documentation",
    "198.51.100.7": "documentation", "203.0.113.9": "documentation", "198.18.0.1": "benchmarking",
    "198.19.255.1": "benchmarking", "192.88.99.1": "6to4 relay", "224.0.0.1": "multicast",
    "239.255.255.250": "multicast", "240.0.0.1": "reserved", "255.255.255.255": "reserved",
    # IPv6
    "::": "unspecified", "::1": "loopback", "fc00::1": "unique local", "fd12:3456::1": "unique local",
    "fe80::1": "link-local", "febf::1": "link-local", "fec0::1": "site-local", "ff02::1": "multicast",
    "ff0e::1": "multicast", "2001:db8::1": "documentation", "3fff::1": "documentation", "100::1": "discard",
    "64:ff9b:1::a00:1": "NAT64 local-use", "2001:0:4136:e378:8000:63bf:3fff:fdd2": "Teredo",
    "2001:2::1": "IETF protocol", "4000::1": "outside global unicast", "::2:1": "IPv4-compatible",
    # IPv4 embedded in IPv6
    "::ffff:127.0.0.1": "IPv4-mapped loopback", "::ffff:169.254.169.254": "IPv4-mapped link-local",
    "::ffff:10.0.0.1": "IPv4-mapped private", "::ffff:0.0.0.0": "IPv4-mapped unspecified",
    "::127.0.0.1": "IPv4-compatible loopback", "::8.8.8.8": "IPv4-compatible (deprecated",
    "64:ff9b::127.0.0.1": "NAT64 loopback", "64:ff9b::169.254.169.254": "NAT64 link-local",
    "64:ff9b::192.168.1.1": "NAT64 private", "2002:7f00:1::1": "6to4 loopback", "2002:a9fe:a9fe::": "6to4 link-local",
    "2002:c0a8:101::": "6to4 private",
}
PUBLIC = ["8.8.8.8", "1.1.1.1", "93.184.215.14", "100.63.255.255", "100.128.0.1", "172.32.0.1", "198.20.0.1",
          "2606:4700:4700::1111", "2a00:1450:4001::200e", "::ffff:8.8.8.8", "64:ff9b::8.8.8.8", "2002:808:808::1"]


@pytest.mark.parametrize("address, kind", sorted(REFUSED.items()))
def test_each_non_public_address_form_is_refused_with_its_kind(address: str, kind: str) -> None:
    why = classify(ipaddress.ip_address(address))
    assert why is not None and kind in why, (address, why)
    with pytest.raises(AddressRefused) as refused:
        AddressPolicy().vet(address, 80)
    assert refused.value.reason == why and address.lower() in str(refused.value)


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_pass(address: str) -> None:
    assert classify(ipaddress.ip_address(address)) is None
    assert AddressPolicy().vet(address, 443) == [str(ipaddress.ip_address(address))]


def resolver(table: dict[str, list[str]], calls: list[str] | None = None):
    def resolve(host: str, port: int) -> list[str]:
        if calls is not None:
            calls.append(host)
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return table[host]
    return resolve


def test_names_are_resolved_once_and_one_internal_address_refuses_the_host() -> None:
    calls: list[str] = []
    policy = AddressPolicy(resolver=resolver({"mixed.test": ["93.184.215.14", "10.0.0.5"],
                                              "meta.test": ["169.254.169.254"],
                                              "www.example.com": ["93.184.215.14", "2606:2800:21f::1"]}, calls))
    with pytest.raises(AddressRefused, match=r"mixed\.test resolves to 10\.0\.0\.5 \(private\)"):
        policy.vet("mixed.test", 80)
    with pytest.raises(AddressRefused, match="cloud metadata"):
        policy.check_url("http://meta.test/latest/meta-data/")
    assert policy.vet("www.example.com", 443) == ["93.184.215.14", "2606:2800:21f::1"]
    assert calls == ["mixed.test", "meta.test", "www.example.com"]  # one lookup per vetting
    with pytest.raises(OSError):
        policy.vet("nowhere.test", 80)


def test_allow_private_resolves_but_refuses_nothing() -> None:
    policy = AddressPolicy(allow_private=True, resolver=resolver({"intranet.test": ["10.0.0.5"]}))
    assert policy.vet("intranet.test", 80) == ["10.0.0.5"]
    assert policy.vet("169.254.169.254", 80) == ["169.254.169.254"]


def test_from_setting_none_means_the_callers_default() -> None:
    assert AddressPolicy.from_setting(None, default=True).allow_private
    assert not AddressPolicy.from_setting(None, default=False).allow_private
    assert not AddressPolicy.from_setting(False, default=True).allow_private
    assert AddressPolicy.from_setting(True, default=False).allow_private


@pytest.mark.parametrize("url", [
    "http://2130706433/", "http://0x7f.1/", "http://017700000001/", "http://127.1/", "http://0/",
    "http://[::ffff:7f00:1]/", "http://[0:0:0:0:0:ffff:127.0.0.1]:8080/", "http://localhost:9/",
])
def test_numeric_and_short_forms_resolve_to_what_they_denote(url: str) -> None:
    """glibc's getaddrinfo turns decimal, hex, octal and short IPv4 forms into addresses; those are classified."""
    with pytest.raises(AddressRefused):
        AddressPolicy().check_url(url)


def test_check_url_needs_an_http_url_with_a_host() -> None:
    for url in ("ftp://example.com/", "http:///nohost", "file:///etc/passwd"):
        with pytest.raises(ValueError):
            AddressPolicy().check_url(url)


@pytest.mark.parametrize("host, other, same", [
    ("example.com", "www.example.com", True), ("www.example.com", "example.com", True),
    ("docs.example.co.uk", "www.docs.example.co.uk", True), ("example.com", "example.com", True),
    ("github.io", "www.github.io", False),  # a public suffix: www.github.io is someone else's site
    ("co.uk", "www.co.uk", False), ("localhost", "www.localhost", False), ("attacker.test", "www.attacker.test", False),
    ("1.2.3.4", "www.1.2.3.4", False), ("example.com", "www2.example.com", False),
    ("example.com", "evil.com", False), ("www.example.com", "www.www.example.com", False),
])
def test_same_site_www_rule_needs_one_registrable_domain(host: str, other: str, same: bool) -> None:
    assert same_site(host, other) is same
