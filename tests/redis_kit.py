"""A redis-server of a test's own: on a free port, without persistence, with a memory
limit and Redis's own `noeviction` policy (the one docker/compose.yaml ships), so a
test may fill it to the limit, restart it or break a key without disturbing anyone.

Not a test module (its fixture is shared through conftest.py's pytest_plugins). Pure
Python: the runner-process tests use it too.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest
import redis

from tests.stack import free_port

# Small enough to fill in a moment, large enough for a few runs' live streams.
MAXMEMORY: Final = "16mb"
FILLER_BYTES: Final = 256 * 1024


class PrivateRedis:
    def __init__(self, folder: Path, maxmemory: str = MAXMEMORY) -> None:
        self.folder = folder
        self.maxmemory = maxmemory
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url)

    def start(self) -> PrivateRedis:
        binary = shutil.which("redis-server")
        assert binary, "redis-server is missing (bin/test runs the suite's own)"
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder),
             "--save", "", "--appendonly", "no", "--maxmemory", self.maxmemory,
             "--maxmemory-policy", "noeviction"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        with self.client() as client:
            while True:
                try:
                    client.ping()
                    return self
                except redis.ConnectionError:
                    assert time.monotonic() < deadline, "redis-server did not start"
                    time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def fill(self) -> None:
        """Write filler until Redis refuses writes (OOM), as a tenant's runs would, and
        keep it there: a refused write's own buffer is freed right after, so the limit
        is then set 1 MiB below what is used."""
        with self.client() as client:
            for index in range(10_000):
                try:
                    client.set(f"filler:{index}", b"x" * FILLER_BYTES)
                except redis.OutOfMemoryError:
                    used = int(client.info("memory")["used_memory"])
                    client.config_set("maxmemory", used - 1024 * 1024)
                    return
        raise AssertionError("Redis never refused a write: is maxmemory set?")

    def free(self) -> None:
        with self.client() as client:
            filler = list(client.scan_iter("filler:*"))
            if filler:
                client.delete(*filler)
            client.config_set("maxmemory", self.maxmemory)

    def used_memory(self) -> int:
        with self.client() as client:
            return int(client.info("memory")["used_memory"])


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path).start()
    yield server
    server.stop()
