"""Crawl one bomb URL in a fresh process and print its peak RSS growth as JSON (used by test_crawler_security).

Usage: python -m tests.integration.rss_probe CODINGS MB page|robots MAX_PAGE_MB
A fresh process gives an honest baseline: in the test process, heap freed by earlier tests would absorb the growth.
The kernel's high-water mark (VmHWM) is reset through /proc/self/clear_refs after a warm-up crawl, so imports and
thread start-up are not counted.
"""

from __future__ import annotations

import json
import sys

import psutil

from deepsearcher.ingest.crawler import BuiltinCrawler
from deepsearcher.ingest.options import BuiltinCrawlerOptions
from tests.integration.hostile_http import HostileServer, bomb


def main(codings: str, mb: int, where: str, max_page_mb: float) -> dict:
    robots = where == "robots"
    if robots:  # compressed before measuring, called exactly as the server calls it (one lru_cache key)
        bomb("gzip", mb, robots=True)
    else:
        bomb(codings, mb)
    site = HostileServer(robots=f"gzbomb:{mb}" if robots else "none")
    url = site.url("/page") if robots else site.url(f"/bomb?enc={codings.replace(' ', '%20')}&mb={mb}")
    settings = BuiltinCrawlerOptions(max_page_mb=max_page_mb)
    list(BuiltinCrawler(settings).crawl([HostileServer().url("/page")], lambda _e: None))  # warm-up
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # VmHWM := current RSS
    before = psutil.Process().memory_info().rss
    pages = list(BuiltinCrawler(settings).crawl([url], lambda _e: None))
    with open("/proc/self/status") as fh:
        peak = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:")) * 1024
    return {"baseline_mb": before / 1e6, "peak_mb": peak / 1e6, "growth_mb": (peak - before) / 1e6,
            "errors": [p.error for p in pages], "paths": site.paths()}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]))))
