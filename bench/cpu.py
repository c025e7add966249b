"""CPU time and resident memory per process group, from /proc/<pid>/stat (utime +
stime of every live process) and /proc/<pid>/statm, for the benchmarks'
CPU-milliseconds-per-run and megabytes-per-run figures."""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

TICK_MS = 1000.0 / os.sysconf("SC_CLK_TCK")
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


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


def rss_bytes(match: Callable[[str, list[str]], bool]) -> int:
    """Resident bytes of every live process `match(pid, fields)` accepts."""
    return rss_of([pid for pid in os.listdir("/proc")
                   if pid.isdigit() and (fields := _stat(pid)) is not None
                   and match(pid, fields)])


def members(groups: dict[str, int]) -> dict[str, list[str]]:
    """The live pids of each named process group, from one pass over /proc."""
    wanted = {str(pgid): name for name, pgid in groups.items()}
    out: dict[str, list[str]] = {name: [] for name in groups}
    for pid in os.listdir("/proc"):
        if pid.isdigit() and (fields := _stat(pid)) is not None and fields[2] in wanted:
            out[wanted[fields[2]]].append(pid)
    return out


def rss_of(pids: list[str]) -> int:
    """Resident bytes of these processes (those still alive)."""
    total = 0
    for pid in pids:
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_BYTES
        except (OSError, ValueError, IndexError):
            continue  # ended meanwhile
    return total


def pid_cpu_ms(pid: int) -> float:
    """CPU ms one process spent so far (0 once it ended)."""
    fields = _stat(str(pid))
    return 0.0 if fields is None else (int(fields[11]) + int(fields[12])) * TICK_MS


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


def calibration_ms(rounds: int = 5) -> float:
    """CPU ms this process takes for a fixed piece of Python work (JSON and hashing, as
    a request's handling does), the median of `rounds`. On a shared VM the speed of a
    core moves by a third between minutes, every process's CPU per run with it: figures
    of two runs compare only at similar calibrations."""
    doc = {"seq": 3, "type": "node.completed", "output": {"text": "hello " * 20},
           "usage": {"tokens": 42}, "at": "2026-11-30T20:00:00.000000+00:00"}
    times = []
    for _ in range(rounds):
        start = time.process_time()
        for i in range(2000):
            data = json.dumps({**doc, "seq": i}).encode()
            json.loads(data)
            hashlib.sha256(data).hexdigest()
        times.append((time.process_time() - start) * 1000)
    return round(statistics.median(times), 2)
