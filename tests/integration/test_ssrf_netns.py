"""The SSRF probes of ../shared/cases/security/ssrf_netns.sh as tests, with real addresses in a private namespace.

tests/integration/netns_probe.py runs inside ``unshare -rnm`` (1.2.3.4 = a public host, 127.0.0.1 = internal,
169.254.169.254 = cloud metadata; names from the namespace's own /etc/hosts) and reports, per probe, each page's
outcome and every request each server received. Skipped, with the reason, where user namespaces are unavailable;
the namespace-free tests of the same rules are in test_crawler_security.py and tests/unit/net/test_netpolicy.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REFUSED = "private and internal addresses are not fetched"


def _namespaces_unavailable() -> str | None:
    missing = [tool for tool in ("unshare", "ip", "mount") if shutil.which(tool) is None]
    if missing:
        return f"needs {', '.join(missing)}"
    probe = subprocess.run(["unshare", "-rnm", "ip", "link", "set", "lo", "up"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"user namespaces unavailable here: {probe.stderr.strip() or probe.returncode}"
    return None


UNAVAILABLE = _namespaces_unavailable()
pytestmark = [pytest.mark.integration, pytest.mark.skipif(UNAVAILABLE is not None, reason=str(UNAVAILABLE))]


@pytest.fixture(scope="module")
def probes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    work = tmp_path_factory.mktemp("netns")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "DO_NOT_TRACK": "1"}
    out = subprocess.run(["unshare", "-rnm", sys.executable, "-m", "tests.integration.netns_probe", str(work)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.splitlines()[-1])


def only_internal_pages(result: dict) -> dict[str, str]:
    """Pages other than the public host's own (attacker.com, attacker.test)."""
    return {url: outcome for url, outcome in result["pages"].items()
            if not url.startswith(("http://attacker.com:", "http://attacker.test:"))}


def test_control_start_url_on_loopback_is_refused(probes):
    result = probes["control"]
    assert [REFUSED in o and "127.0.0.1 (loopback)" in o for o in result["pages"].values()] == [True]
    assert result["internal"] == []


@pytest.mark.parametrize("name", ["www", "www_link"])
def test_www_of_a_public_host_resolving_to_loopback_is_refused(probes, name):
    """same_site on: attacker.com ~ www.attacker.com (one registrable domain), so only the address policy stops it."""
    result = probes[name]
    [(url, outcome)] = only_internal_pages(result).items()
    assert url.startswith("http://www.attacker.com:") and "www.attacker.com resolves to 127.0.0.1" in outcome
    assert result["internal"] == []


def test_www_rule_does_not_join_names_outside_the_public_suffix_list(probes):
    [outcome] = probes["www_test_tld"]["pages"].values()
    assert outcome.startswith("redirects to another site") and probes["www_test_tld"]["internal"] == []


@pytest.mark.parametrize("name, address", [("redirect_samesite_off", "169.254.169.254 (link-local, cloud metadata)"),
                                           ("link_samesite_off", "127.0.0.1 (loopback)"),
                                           ("link_ipv4_mapped", "::ffff:127.0.0.1 (IPv4-mapped loopback)")])
def test_redirects_and_links_to_internal_addresses_are_refused_with_same_site_off(probes, name, address):
    result = probes[name]
    [outcome] = only_internal_pages(result).values()
    assert f"refused: {address}" in outcome
    assert result["internal"] == [] and result["meta"] == []


def test_robots_txt_redirect_to_loopback_makes_no_request(probes):
    result = probes["robots_redirect"]
    assert result["internal"] == [] and result["attacker"] == ["/robots.txt", "/page"]
    assert list(result["pages"].values()) == ["LOADED"]


def test_dns_rebinding_to_loopback_after_a_public_answer_is_refused(probes):
    result = probes["rebinding"]
    outcomes = result["pages"]
    assert sorted(outcomes.values())[0] == "LOADED" and any("rebind.example resolves to 127.0.0.1" in o
                                                            for o in outcomes.values())
    assert result["rebound"] == [] and result["attacker"] == ["/links"]


def test_the_probe_does_leak_when_private_urls_are_allowed(probes):
    """The harness can see a leak: with allow_private_urls on, the same redirect reads the internal page."""
    result = probes["allowed_www"]
    assert "LOADED INTERNAL-SECRET" in result["pages"].values() and "/secret" in result["internal"]


# --- the same probes through the HTTP server (ssrf_netns.sh sends them to `deepsearcher serve`) ---------------------
def test_server_refuses_an_internal_start_url(probes):
    result = probes["server"]["control"]
    # the kind of address, not what the name resolves to (#21)
    assert result["status"] == 403 and "non-public address (loopback)" in result["answer"]["detail"]
    assert result["internal"] == [] and not result["leaked"]


@pytest.mark.parametrize("name, refused", [
    ("www", "www.attacker.com resolves to 127.0.0.1 (loopback)"),
    ("redirect_samesite_off", "169.254.169.254 (link-local, cloud metadata)"),
])
def test_server_loads_refuse_redirects_to_internal_addresses(probes, name, refused):
    """The start URL is public, so the server's own check passes; the crawler must apply the server's rule."""
    result = probes["server"][name]
    assert result["status"] == 400 and refused in result["answer"]["detail"]
    assert not result["leaked"] and result["internal"] == [] and result["meta"] == []


@pytest.mark.parametrize("name, refused", [("www_link", "www.attacker.com resolves to 127.0.0.1"),
                                           ("link_samesite_off", "127.0.0.1 (loopback)")])
def test_server_loads_list_links_to_internal_addresses_as_refused(probes, name, refused):
    result = probes["server"][name]
    assert result["status"] == 200
    skipped = [f for f in result["answer"]["files"] if f["status"] == "skipped"]
    assert len(skipped) == 1 and refused in skipped[0]["reason"] and REFUSED in skipped[0]["reason"]
    assert not result["leaked"] and result["internal"] == []


def test_server_loads_make_no_robots_txt_request_to_internal_addresses(probes):
    result = probes["server"]["robots_redirect"]
    assert result["status"] == 200 and [f["status"] for f in result["answer"]["files"]] == ["loaded"]
    assert result["internal"] == [] and result["attacker"] == ["/robots.txt", "/page"]


def test_the_server_probe_does_leak_when_the_server_allows_private_urls(probes):
    """The harness can see a leak through the server: with server.allow_private_urls: true it reads the page."""
    result = probes["server"]["allowed_www"]
    assert result["status"] == 200 and result["leaked"] and "/secret" in result["internal"]
