"""A run's state is freed by reference counts as the run ends: none of it is left in a
reference cycle for the cyclic collector. A runner process holds hundreds of runs and
spaces its full collections (runner/heap.py); state left in cycles would stay until
one of them, and every full collection would walk it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from engine_kit import chain, graph, run

from tests.cyclic_garbage import cyclic_garbage

ROOT = Path(__file__).resolve().parents[2]
RUN_STATE = {"RunContext", "Emitter", "ForwardingEmitter", "Redactor", "RunRequest",
             "Scheduler", "Budgets", "InMemoryResources", "RunHandle"}


def test_a_finished_runs_state_is_in_no_reference_cycle() -> None:
    nested = chain(("s", "subflow", {"subflow": "v-shout"}))
    g = graph([("input", "input"), ("f", "subflow", {"subflow": "v-nested"}),
               ("output", "output")], ["input>f", "f>output"])
    with cyclic_garbage() as left:
        done = run(g, "hey", subflows={"v-nested": nested,
                                       "v-shout": chain(("p", "prompt", {"template": "{input}!"}))})
        assert done.result.output == "hey!"
        del done
    assert not RUN_STATE & set(left), sorted(RUN_STATE & set(left))


HOSTED = """
import gc, time, weakref
import redis
from runner.host import RunHandle, RunHost

host = RunHost(4, 4)
client = redis.Redis.from_url("redis://127.0.0.1:1/0")  # no lease: never asked
gc.disable()

async def body(handle):
    return "ok"

handle = RunHandle("a-run", "", client, 60.0)
gone = weakref.ref(handle)
assert host.submit(handle, body).result() == "ok"
del handle
deadline = time.monotonic() + 5
while gone() is not None and time.monotonic() < deadline:
    time.sleep(0.05)  # the host forgets the run on its loop
print("freed" if gone() is None else "kept")
"""


def test_a_hosted_runs_handle_goes_with_its_run() -> None:
    done = subprocess.run([sys.executable, "-c", HOSTED], cwd=ROOT, capture_output=True,
                          text=True, timeout=30)
    assert done.stdout.strip() == "freed", done.stderr
