"""The local Ray a load starts (``ingest.engine: ray``, no ``ingest.ray.address``) is reachable from this machine
only: every socket its processes listen on is a loopback one, even with token authentication off (issue #21,
finding 5; ``../shared/cases/security3/ray_exposure_netns.sh`` shows a LAN peer running code before). Skipped
without the extra ``ray``."""

from __future__ import annotations

import ipaddress

import pytest

pytestmark = pytest.mark.integration
ray = pytest.importorskip("ray", reason="the Ray engine needs the extra: pip install 'deepsearcher[ray]'")
psutil = pytest.importorskip("psutil", reason="psutil lists the sockets Ray's processes listen on")


def _loopback(ip: str) -> bool:
    address = ipaddress.ip_address(ip)
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


#: run in a process of its own: Ray reads RAY_AUTH_MODE once per process (a later Ray test in this process would
#: start with auth off), and only that process's children are Ray's (the suite's Milvus server is a child of pytest)
PROBE = """
import json, types, psutil, ray
from deepsearcher.ingest.ray_engine import RaySession
from deepsearcher.settings import Settings
settings = Settings.model_validate({"ingest": {"engine": "ray", "ray": {"num_cpus": 1}}})
job = types.SimpleNamespace(workers=types.SimpleNamespace(vector_db=types.SimpleNamespace(token_env=None)))
with RaySession(settings.ingest.ray, job):
    gcs = ray.get_runtime_context().gcs_address
    pids = {p.pid for p in psutil.Process().children(recursive=True)}
    listening = sorted({(c.laddr.ip, c.laddr.port) for c in psutil.net_connections(kind="inet")
                        if c.status == psutil.CONN_LISTEN and c.pid in pids})
print(json.dumps({"gcs": gcs, "listening": listening}))
"""


def test_local_ray_listens_on_loopback_only() -> None:
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}  # as every Ray before 2.59: the binding alone must hold
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    listening = [tuple(item) for item in found["listening"]]
    assert found["gcs"].startswith("127.0.0.1:")
    assert listening and all(_loopback(ip) for ip, _ in listening), listening
