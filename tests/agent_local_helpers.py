"""Waiting for a local agent runtime process (tests of agents/local.py)."""

from __future__ import annotations

import time
from typing import Any


def until(check: Any, seconds: float = 30) -> Any:
    """check()'s first truthy answer within `seconds`, else AssertionError."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError("not in time")
