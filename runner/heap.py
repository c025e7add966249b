"""The cyclic garbage collector of a long-lived process that holds many runs at once.

CPython collects its oldest generation (a full collection, which walks every tracked
object of the process) once ten collections of the middle one have run and the
objects promoted since the last full one are a quarter of those that survived it.
A process holding hundreds of runs that wait promotes their objects at the pace runs
start, so it met that rule every 8–10 s, and each full collection walked every run's
objects and everything imported: 150–260 ms of CPU, up to 0.8 s of wall time, during
which none of the process's runs moved (measured with 500 runs in flight per runner
process; bench/capacity.py). Hence, once start-up is done:

- what it made (the libraries, the URLconf, the engine) is frozen out of the
  collector's sight: it lives as long as the process, and no collection walks it;
- full collections are spaced ten times wider (FULL_COLLECTION_EVERY middle ones).
  Objects die by their reference counts as before; only garbage in reference cycles
  waits longer for its collection, which the resident memory per run measured in
  the same bench covers.
"""

from __future__ import annotations

import gc
from typing import Final

# Collections of the middle generation per full collection (CPython's default: 10).
FULL_COLLECTION_EVERY: Final = 100


def settle() -> None:
    """Call once start-up is done: collect, freeze what is left, space full collections."""
    gc.collect()
    gc.freeze()
    youngest, middle, _oldest = gc.get_threshold()
    gc.set_threshold(youngest, middle, FULL_COLLECTION_EVERY)
