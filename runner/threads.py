"""Threads a worker process reuses from run to run, instead of starting new ones.

`spawn(fn)` runs fn on an idle thread of the process's own, or on a new one when
all are busy (so work never waits behind another run's); it returns an Event set
when fn returned. A thread that found no work for IDLE_SECONDS ends. After a fork
the child starts with no threads of its own (the parent's do not exist there).
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable
from typing import Final

log = logging.getLogger(__name__)

IDLE_SECONDS: Final = 300.0

_Job = tuple[Callable[[], None], threading.Event]

_state: dict[str, object] = {}
_lock = threading.Lock()


def _after_fork() -> None:
    global _lock
    _lock = threading.Lock()  # a lock held by a parent's thread at the fork stays held
    _state.clear()


os.register_at_fork(after_in_child=_after_fork)


def _jobs() -> tuple[queue.SimpleQueue[_Job], list[int]]:
    """This process's job queue and its count of idle threads."""
    if _state.get("pid") != os.getpid():
        _state.update(pid=os.getpid(), jobs=queue.SimpleQueue(), idle=[0])
    return _state["jobs"], _state["idle"]  # type: ignore[return-value]


def spawn(fn: Callable[[], None], name: str = "runner-worker") -> threading.Event:
    done = threading.Event()
    with _lock:
        jobs, idle = _jobs()
        if idle[0] > 0:
            idle[0] -= 1  # that thread takes this job
        else:
            threading.Thread(target=_serve, args=(jobs, idle), name=name, daemon=True).start()
        jobs.put((fn, done))
    return done


def _serve(jobs: queue.SimpleQueue[_Job], idle: list[int]) -> None:
    while True:
        try:
            fn, done = jobs.get(timeout=IDLE_SECONDS)
        except queue.Empty:
            with _lock:
                if jobs.empty():
                    idle[0] -= 1
                    return
            continue
        try:
            fn()
        except BaseException:  # a job's own bug must not kill the thread silently
            log.exception("a runner thread's job failed")
        finally:
            done.set()
            with _lock:
                idle[0] += 1
