"""CPU time per process group, from /proc/<pid>/stat (utime + stime of every live
process), for the benchmark's CPU-milliseconds-per-run figures."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

TICK_MS = 1000.0 / os.sysconf("SC_CLK_TCK")


def _stat(pid: str) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces: split after its closing parenthesis.
    return raw[raw.rindex(")") + 2:].split()


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def cpu_ms(match: Callable[[str, list[str]], bool]) -> dict[str, float]:
    """{pid: CPU ms so far} of every process `match(pid, fields)` accepts (fields[0]
    is the state, fields[2] the process group, fields[11:13] utime and stime)."""
    out: dict[str, float] = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        fields = _stat(pid)
        if fields is not None and match(pid, fields):
            out[pid] = (int(fields[11]) + int(fields[12])) * TICK_MS
    return out


def group(pgid: int) -> Callable[[str, list[str]], bool]:
    return lambda _pid, fields: fields[2] == str(pgid)


def postgres_backends(database: str) -> Callable[[str, list[str]], bool]:
    """PostgreSQL's backends serving `database` (their title names it)."""
    return lambda pid, fields: f": postgres {database} " in _cmdline(pid)


def this_process() -> Callable[[str, list[str]], bool]:
    me = str(os.getpid())
    return lambda pid, _fields: pid == me


class CpuMeter:
    """Snapshot before, snapshot after: CPU ms spent in between, per named source
    (processes present at both snapshots; new ones count from zero)."""

    def __init__(self, sources: dict[str, Callable[[str, list[str]], bool]]) -> None:
        self.sources = sources
        self.before = {name: cpu_ms(match) for name, match in sources.items()}

    def spent(self) -> dict[str, float]:
        spent = {}
        for name, match in self.sources.items():
            now = cpu_ms(match)
            spent[name] = sum(ms - self.before[name].get(pid, 0.0) for pid, ms in now.items())
        return spent
