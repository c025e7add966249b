"""The cyclic garbage collector of a long-lived process that holds many runs at once.

CPython collects its oldest generation (a full collection, which walks every tracked
object of the process) once ten collections of the middle one have run and the
objects promoted since the last full one are a quarter of those that survived it.
A process holding hundreds of runs that wait promotes their objects at the pace runs
start, so it met that rule every 8–10 s, and each full collection walked every run's
objects and everything imported: 150–260 ms of CPU, up to 0.8 s of wall time, during
which none of the process's runs moved (measured with 500 runs in flight per runner
process; bench/capacity.py). Hence, once start-up is done:

- `freeze`: what start-up made (the libraries, the URLconf, the engine) is frozen out
  of the collector's sight: it lives as long as the process, and no collection walks
  it. The processes that hold many runs, streams or calls at once do this (runner
  pool processes, both listeners, a deployed agent's runtime), and the events
  ingester, whose full collections walked everything imported (up to 130 ms each,
  storing no event meanwhile); Celery's parent processes hold few objects and do not.
- `space_full_collections`: full collections ten times wider (FULL_COLLECTION_EVERY
  middle ones), in the processes whose work leaves nothing in reference cycles, so
  that its objects die by reference counts as it ends: runner pool processes (their
  runs: tests/runner/test_run_state_freed.py) and the internal listener (its resource
  calls: tests/test_internal_call_freed.py). Not the public listener: Django's and
  DRF's objects of its ordinary requests refer to each other (request, view, parser
  context, sessions and messages), and each request's would wait longer.
"""

from __future__ import annotations

import gc
from typing import Final

# Collections of the middle generation per full collection (CPython's default: 10).
FULL_COLLECTION_EVERY: Final = 100


def freeze() -> None:
    """Call once start-up is done: collect, then freeze what is left."""
    gc.collect()
    gc.freeze()


def space_full_collections() -> None:
    """A full collection every FULL_COLLECTION_EVERY collections of the middle generation."""
    youngest, middle, _oldest = gc.get_threshold()
    gc.set_threshold(youngest, middle, FULL_COLLECTION_EVERY)
