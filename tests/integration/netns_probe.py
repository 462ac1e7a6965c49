"""SSRF probes with real addresses, run inside a private user+network+mount namespace (``unshare -rnm``).

Inside the namespace 1.2.3.4 (attacker.com, attacker.test) plays a public host, 127.0.0.1 (www.attacker.com,
www.attacker.test) an internal one and 169.254.169.254 a cloud metadata service; /etc/hosts and /etc/resolv.conf are
replaced by bind mounts that only the namespace sees, and nothing can leave the machine. The built-in crawler runs
with ``allow_private_urls: false`` and the system resolver (glibc reading the namespace's /etc/hosts).

The same probes then go through the real HTTP server, as ../shared/cases/security/ssrf_netns.sh sends them: the app
of ``deepsearcher serve`` (uvicorn on 1.2.3.4, a bearer token, ``server.allow_private_urls`` unset, so off loopback
it is false) with Milvus Lite in WORKDIR and a hash embedder; each probe is a ``POST /api/load`` followed by a BM25
``POST /api/retrieve`` for the internal page's words, which would read back what the crawler fetched.

Usage: unshare -rnm python -m tests.integration.netns_probe WORKDIR   -> one JSON object on stdout:
{probe: {"pages": {url: error or "LOADED" or "LOADED INTERNAL-SECRET"}, "internal": [paths], "meta": [paths],
"attacker": [paths]}, "server": {probe: {"status": HTTP status of the load, "answer": its JSON, "leaked": bool,
"internal": [paths], "meta": [paths], "attacker": [paths]}}}. Used by tests/integration/test_ssrf_netns.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from deepsearcher.ingest.crawler import BuiltinCrawler
from deepsearcher.net.policy import AddressPolicy
from deepsearcher.ingest.options import BuiltinCrawlerOptions
from tests.integration.hostile_http import HostileServer

HOSTS = ("127.0.0.1 localhost\n1.2.3.4 attacker.com attacker.test\n"
         "127.0.0.1 www.attacker.com www.attacker.test\n")


def enter(work: Path) -> None:
    """Give the namespace its addresses and its own name resolution."""
    for cmd in (["ip", "link", "set", "lo", "up"], ["ip", "addr", "add", "1.2.3.4/32", "dev", "lo"],
                ["ip", "addr", "add", "169.254.169.254/32", "dev", "lo"]):
        subprocess.run(cmd, check=True)
    (work / "hosts").write_text(HOSTS)
    (work / "resolv.conf").write_text("nameserver 127.0.0.1\noptions attempts:1 timeout:1\n")
    subprocess.run(["mount", "--bind", str(work / "hosts"), "/etc/hosts"], check=True)
    subprocess.run(["mount", "--bind", str(work / "resolv.conf"), "/etc/resolv.conf"], check=True)


def outcome(error: str, content: bytes) -> str:
    if error:
        return error
    return "LOADED INTERNAL-SECRET" if b"INTERNAL-SECRET-4242" in content else "LOADED"


def main(work: Path) -> dict[str, dict]:
    enter(work)
    internal = HostileServer("127.0.0.1")
    meta = HostileServer("169.254.169.254", port=80)
    attacker = HostileServer("1.2.3.4", robots=f"redirect:{internal.url('/robots-probe')}")
    rebound = HostileServer("127.0.0.1", port=attacker.port)  # what a rebinding second lookup would reach
    servers = {"internal": internal, "meta": meta, "attacker": attacker, "rebound": rebound}
    a, i = attacker.port, internal.port
    probes = {  # name: (start URL, same_site, allow_private_urls)
        "control": (f"http://127.0.0.1:{i}/secret", True, False),
        "www": (f"http://attacker.com:{a}/redirect?to=http://www.attacker.com:{i}/secret", True, False),
        "www_link": (f"http://attacker.com:{a}/links?u=http://www.attacker.com:{i}/secret", True, False),
        "www_test_tld": (f"http://attacker.test:{a}/redirect?to=http://www.attacker.test:{i}/secret", True, False),
        "redirect_samesite_off": (f"http://attacker.com:{a}/redirect?to=http://169.254.169.254/secret", False, False),
        "link_samesite_off": (f"http://attacker.com:{a}/links?u=http://127.0.0.1:{i}/secret", False, False),
        "link_ipv4_mapped": (f"http://attacker.com:{a}/links?u=http://[::ffff:127.0.0.1]:{i}/secret", False, False),
        "robots_redirect": (f"http://attacker.com:{a}/page", True, False),
        "allowed_www": (f"http://attacker.com:{a}/redirect?to=http://www.attacker.com:{i}/secret", True, True),
    }
    results: dict[str, dict] = {}
    for name, (start, same_site, allow) in probes.items():
        results[name] = run(start, servers, BuiltinCrawlerOptions(same_site=same_site, allow_private_urls=allow,
                                                           timeout_s=5, max_depth=1))
    answers = iter([["1.2.3.4"]] + [["127.0.0.1"]] * 10)  # rebinding: public once, then internal
    policy = AddressPolicy(resolver=lambda host, port: next(answers))
    results["rebinding"] = run(f"http://rebind.example:{a}/links?u=/page", servers,
                               BuiltinCrawlerOptions(allow_private_urls=False, timeout_s=5, respect_robots=False), policy)
    results["server"] = server_probes(work, servers)
    return results


TOKEN = "ns-token-1234567890"


def server_probes(work: Path, servers: dict[str, HostileServer]) -> dict[str, dict]:
    """The ssrf_netns.sh probes through ``POST /api/load`` of a server on 1.2.3.4 (off loopback, with a token)."""
    a, i = servers["attacker"].port, servers["internal"].port
    probes = {  # name: (start URL, same_site, server.allow_private_urls)
        "control": (f"http://127.0.0.1:{i}/secret", True, None),
        "www": (f"http://attacker.com:{a}/redirect?to=http://www.attacker.com:{i}/secret", True, None),
        "www_link": (f"http://attacker.com:{a}/links?u=http://www.attacker.com:{i}/secret", True, None),
        "robots_redirect": (f"http://attacker.com:{a}/page", True, None),
        "redirect_samesite_off": (f"http://attacker.com:{a}/redirect?to=http://169.254.169.254/secret", False, None),
        "link_samesite_off": (f"http://attacker.com:{a}/links?u=http://127.0.0.1:{i}/secret", False, None),
        "allowed_www": (f"http://attacker.com:{a}/redirect?to=http://www.attacker.com:{i}/secret", True, True),
    }
    os.environ["DS_NETNS_TOKEN"] = TOKEN
    results: dict[str, dict] = {}
    for n, (name, (start, same_site, allow)) in enumerate(probes.items()):
        results[name] = through_server(work / f"db{n}", start, servers, same_site, allow)
    return results


def through_server(db: Path, start: str, servers: dict[str, HostileServer], same_site: bool,
                   allow: bool | None) -> dict[str, Any]:
    import httpx

    from deepsearcher.app import DeepSearcher
    from deepsearcher.server import create_app
    from deepsearcher.settings import load_settings
    from deepsearcher.testing import HashEmbedder
    from tests.integration.server_support import LiveServer

    settings = load_settings(None, {
        "llm": None, "vector_db": {"uri": str(db / "milvus.db")},
        "crawler": {"same_site": same_site, "timeout_s": 5, "max_depth": 1},  # allow_private_urls unset, as shipped
        "server": {"host": "1.2.3.4", "token_env": "DS_NETNS_TOKEN", "allow_private_urls": allow}})
    for server in servers.values():
        server.requests.clear()
    with DeepSearcher(settings, embedder=HashEmbedder(256)) as searcher, \
            LiveServer(create_app(settings, searcher=searcher), host="1.2.3.4") as live:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        with httpx.Client(base_url=live.url, headers=headers, timeout=60) as client:
            load = client.post("/api/load", json={"inputs": [start], "collection": "probe"})
            hits = client.post("/api/retrieve", json={"query": "INTERNAL-SECRET-4242", "mode": "bm25"})
    result: dict[str, Any] = {"status": load.status_code, "answer": load.json(),
                              "leaked": "INTERNAL-SECRET-4242" in hits.text}
    result.update({name: server.paths() for name, server in servers.items()})
    return result


def run(start: str, servers: dict[str, HostileServer], settings: BuiltinCrawlerOptions,
        policy: AddressPolicy | None = None) -> dict:
    for server in servers.values():
        server.requests.clear()
    pages = BuiltinCrawler(settings, policy=policy).crawl([start], lambda _e: None)
    result: dict = {"pages": {p.url: outcome(p.error, p.content) for p in pages}}
    result.update({name: server.paths() for name, server in servers.items()})
    return result


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]))))
