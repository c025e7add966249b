"""A loop that stays blocked in code that never returns to Python (a C call: the
watchdog's RunBlocked cannot land) takes its process down after KILL_SECONDS — the
hard kill of a wedged process: its runs' leases then run out (runner_lost) and Celery
replaces the process. Here a host of its own in a subprocess, with a short bound."""

from __future__ import annotations

import subprocess
import sys
import time

from runner.host import EX_SOFTWARE
from tests.runner_process.runner_kit import ROOT

WEDGED = """
import asyncio, time, logging
import redis
from runner.host import RunHandle, RunHost
logging.basicConfig()
host = RunHost(4, 4, block_seconds=0.5, kill_seconds=2.0)
client = redis.Redis.from_url("redis://127.0.0.1:1/0")  # never reached: no lease to renew

async def wedge(handle):
    time.sleep(30)  # a C call holding the loop: no bytecode runs, nothing can be raised
    return "woke"

async def wait(handle):
    await asyncio.sleep(30)
    return "done"

host.submit(RunHandle("waiting-run", "", client, 60.0), wait)
host.submit(RunHandle("wedged-run", "", client, 60.0), wedge).result()
print("not killed")
"""


def test_a_wedged_loop_takes_its_process_down() -> None:
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-c", WEDGED], cwd=ROOT, capture_output=True,
                          text=True, timeout=20)
    took = time.monotonic() - began
    assert done.returncode == EX_SOFTWARE, done.stderr
    assert "not killed" not in done.stdout
    assert "blocked for" in done.stderr and "wedged-run" in done.stderr
    assert "runner_lost" in done.stderr
    assert took < 10
