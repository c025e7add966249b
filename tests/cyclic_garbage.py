"""What a block of code leaves in reference cycles: for tests that the work of a
long-lived process (a run, a resource call) is freed by reference counts as it ends,
since such processes space their full collections out (runner/heap.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cyclic_garbage() -> Iterator[list[str]]:
    """The type names of what the block left in reference cycles (and nothing else)."""
    found: list[str] = []
    gc.collect()
    gc.disable()
    try:
        yield found
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        found.extend(type(garbage).__qualname__ for garbage in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
