"""bench/capacity.py's load: N lanes (alternating projects) each start a run of input →
model (the slow upstream) → output, wait for its end and start another, `--rounds`
times. A start refused with 429 is counted and tried again after a pause (0.25 s
doubling to 2 s), as a client would. `--sample` lanes, spread over all of them,
follow their runs over SSE as the projects' viewers, each viewer within
KIONGA_MAX_STREAMS_PER_USER streams at once; every lane learns of its run's end from the
product's run.ended notice (a slow database poll catches any notice missed).

Figures: in_flight (the most runs accepted and not ended at once), refusals,
throughput_ratio (completed per second ÷ N / latency), the runner's and internal
listener's resident memory above idle per run / per upstream call, added latency
(end to end minus the upstream's), and what the followed streams delivered:
sse_lost counts only stored events a stream that was opened did not deliver (a
stream cut mid-run is resumed with Last-Event-ID, as EventSource does: sse_resumed);
stream opens the gateway refused are sse_refused, by code, and those runs are not
followed. The steady_* figures are the same measured only over the steady part of the
load (docs/decisions/capacity-steady-window.md): after the first burst of N starts is
absorbed and before the first lane is done, so they need a few rounds (default 4)."""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import random
import signal
import subprocess
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import psycopg
import redis.asyncio

from bench.capacity_stack import (
    DB_NAME,
    MB,
    Project,
    call,
    create_design,
    upstream_stats,
)
from bench.cpu import (
    CpuMeter,
    calibration_ms,
    group,
    members,
    pid_cpu_ms,
    postgres_backends,
    rss_of,
    this_process,
)
from bench.http_client import AsyncClient, alines
from bench.stack_setup import pct
from tests.sse_frames import FrameParser
from tests.stack import VENV_BIN, Stack

RETRY_PAUSE = 0.25  # after a 429 (the answers carry no Retry-After), doubling ...
MAX_RETRY_PAUSE = 2.0  # ... up to this
# A run's end reaches its lane as the product's run.ended notice (Redis pub/sub, what
# the admin's runs list listens to); a database poll this often catches any notice
# missed. Polling every 0.1 s for every run in flight (the way before) cost ~0.9 ms of
# a PostgreSQL backend's CPU per run, on the same two cores as the stack.
POLL = 2.0
NOTICES = "events_channel"  # kionga.notices.PUBSUB_CHANNEL
TERMINAL = ("run.completed", "run.failed", "run.cancelled")
MAX_RESUMES = 5  # a followed stream cut this many times is given up (its run's rest: lost)


def model_graph() -> dict[str, Any]:
    return {"schema_version": 2,
            "nodes": [{"id": "input", "kind": "input"},
                      {"id": "model", "kind": "model", "config": {"model": "slow"}},
                      {"id": "output", "kind": "output"}],
            "edges": [{"from": "input", "to": "model"}, {"from": "model", "to": "output"}],
            "settings": {"timeout_seconds": 300}}


def quantile(values: list[float], q: float) -> float | None:
    return round(pct(values, q), 1) if values else None


def peak_overlap(spans: list[tuple[float, float]]) -> int:
    """The most spans that overlap at one instant."""
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans],
                   key=lambda edge: (edge[0], edge[1]))  # an end before a start at a tie
    peak = now = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    return peak


def followed_lanes(lanes: int, sample: int, projects: int) -> dict[int, int]:
    """The lanes that follow their runs over SSE (lane index → its place among them):
    `sample` lanes spread evenly over all of them, each of the project of its place
    (lane % projects == place % projects). Not the first ones: every wave of starts is
    served in lane order, so the first lanes' runs start first and wait least, and a
    sample of them would flatter the added latency."""
    followed: dict[int, int] = {}
    for place in range(sample):
        index = place * lanes // sample
        index += (place - index) % projects  # the place's project
        followed[index] = place
    if len(followed) < sample or max(followed) >= lanes:
        return {place: place for place in range(sample)}  # too few lanes to spread
    return followed


def watcher_of(place: int, projects: list[Project], per_user: int) -> str:
    """The viewer token the followed lane at `place` (followed_lanes) follows its runs
    with: its project's followed lanes in groups of `per_user` per viewer (a lane follows
    one stream at a time)."""
    project = projects[place % len(projects)]
    return project.watchers[(place // len(projects)) // per_user]


def watchers_needed(sample: int, projects: int, per_user: int) -> int:
    """Viewers per project for `sample` followed lanes spread over `projects`."""
    return math.ceil(math.ceil(sample / projects) / per_user)


@dataclass(frozen=True)
class RunTimes:
    """One run of a lane, epoch s: its POST sent and accepted, its end stored by the
    runner (read after the load: `settle`), and its terminal event read over SSE (None
    when not followed)."""

    lane: int
    run_id: str
    sent: float
    accepted: float
    arrived: float | None
    finished: float = 0.0


@dataclass
class Load:
    # (accepted, ended at the runner) of every run, epoch s: in_flight is their peak overlap
    spans: list[tuple[float, float]] = field(default_factory=list)
    refusals: int = 0
    first_burst_refused: int = 0
    codes: Counter[str] = field(default_factory=Counter)
    completed: int = 0
    failed: int = 0
    failures: Counter[str] = field(default_factory=Counter)  # the failed runs' error codes
    added_sse: list[float] = field(default_factory=list)
    added_runner: list[float] = field(default_factory=list)
    seen: dict[str, set[int]] = field(default_factory=dict)  # a followed run's seqs
    deltas: int = 0
    sse_refused: Counter[str] = field(default_factory=Counter)  # stream opens refused
    sse_resumed: int = 0  # streams cut mid-run and opened again with Last-Event-ID
    sse_given_up: int = 0  # streams cut more than MAX_RESUMES times
    # run ID → future set (and the entry dropped) when the run's end is stored: by its
    # run.ended notice (listen_ends) or the fallback poll (poll_ends)
    pending: dict[str, asyncio.Future[None]] = field(default_factory=dict)
    poll_ms: float = 0.0  # CPU of the database backend that served the poller and `settle`
    runs: list[RunTimes] = field(default_factory=list)


async def start_run(client: AsyncClient, design: str, text: str, load: Load,
                    first: bool, deadline: float) -> tuple[str, float, float] | None:
    """(run ID, epoch s its accepted POST was sent, and answered), trying again after
    each 429; None when the deadline passed before a start was accepted."""
    tries = 0
    while True:
        sent = time.time()
        response = await call(client, "POST", f"/api/v1/agent-designs/{design}/runs",
                              {"input": text})
        if response.status == 201:
            return str(response.json()["id"]), sent, time.time()
        if response.status != 429:
            raise RuntimeError(f"start answered {response.status}: {response.text}")
        load.refusals += 1
        load.codes[response.json().get("error", {}).get("code", "?")] += 1
        if first:
            load.first_burst_refused += 1
            first = False
        if time.monotonic() > deadline:
            return None
        # Backing off as a client would (0.25 s, doubling to 2 s, with jitter): a
        # thousand refused lanes must not turn into a flood of starts.
        await asyncio.sleep(min(MAX_RETRY_PAUSE, RETRY_PAUSE * 2 ** tries)
                            * random.uniform(0.75, 1.25))
        tries += 1


class Refused(Exception):
    """The gateway refused to open the stream (its error code)."""


async def read_stream(client: AsyncClient, url: str, token: str, last_seq: int | None,
                      seen: set[int], load: Load) -> float | None:
    """Read one opening of a run's stream into `seen`; when its terminal event arrived
    (None: the stream ended or broke before it)."""
    headers = None if last_seq is None else {"Last-Event-ID": str(last_seq)}
    response = await client.send("GET", url, accept="text/event-stream", token=token,
                                 headers=headers)
    try:
        if response.status != 200:
            try:
                code = str(json.loads(await response.read())["error"]["code"])
            except (ValueError, KeyError, TypeError):
                code = str(response.status)
            raise Refused(code)
        parser = FrameParser()
        async for line in alines(response):
            if (frame := parser.feed(line)) is None:
                continue
            kind, doc, has_id = frame
            if kind == "delta":
                load.deltas += 1
            elif has_id and isinstance(doc.get("seq"), int):
                seen.add(doc["seq"])
                if doc.get("type") in TERMINAL:
                    return time.time()
        return None
    finally:
        response.close()  # a stream left before its end: its connection is not kept


async def follow(client: AsyncClient, design: str, run_id: str, token: str,
                 load: Load) -> tuple[set[int], float | None] | None:
    """The stored events' seqs the run's stream delivered and when its terminal event
    arrived, resuming a cut stream with Last-Event-ID; None when the gateway refused
    to open it (counted in sse_refused: the run is not followed)."""
    seen: set[int] = set()
    url = f"/api/v1/agent-designs/{design}/runs/{run_id}/events"
    for opening in range(MAX_RESUMES + 1):
        try:
            arrived = await read_stream(client, url, token, max(seen, default=None), seen, load)
        except Refused as refused:
            if opening == 0:
                load.sse_refused[str(refused)] += 1
                return None
            load.sse_refused[f"resume:{refused}"] += 1
            break
        except OSError:  # cut (ConnectionError) or silent too long (TimeoutError)
            arrived = None
        if arrived is not None:
            return seen, arrived
        if opening < MAX_RESUMES:
            load.sse_resumed += 1
    load.sse_given_up += 1
    return seen, None


def ended(load: Load, run_id: str) -> None:
    future = load.pending.pop(run_id, None)
    if future is not None and not future.done():
        future.set_result(None)


async def listen_ends(redis_url: str, load: Load, ready: asyncio.Event,
                      stop: asyncio.Event) -> None:
    """Resolve the pending runs' futures as their run.ended notices arrive."""
    client = redis.asyncio.Redis.from_url(redis_url)
    pubsub = client.pubsub()
    await pubsub.subscribe(NOTICES)
    ready.set()
    try:
        while not stop.is_set():
            message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.5)
            if message is None:
                continue
            data = json.loads(json.loads(message["data"])["data"])
            if data.get("kind") == "run.ended":
                ended(load, str(data["run_id"]))
    finally:
        await pubsub.aclose()
        await client.aclose()


@asynccontextmanager
async def bench_connection(dsn: str, load: Load) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    """A database connection of the bench's own. The CPU of the PostgreSQL backend
    serving it is the bench's, not the stack's: it goes to load.poll_ms (its backend
    ends with the connection, before the stack's meter reads the database's backends)."""
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        row = await (await conn.execute("SELECT pg_backend_pid()")).fetchone()
        backend = int(row[0]) if row else 0
        began = pid_cpu_ms(backend)
        try:
            yield conn
        finally:
            load.poll_ms += pid_cpu_ms(backend) - began


async def poll_ends(dsn: str, load: Load, stop: asyncio.Event) -> None:
    """Resolve the pending runs whose end is stored but whose notice was missed."""
    async with bench_connection(dsn, load) as conn:
        while not stop.is_set():
            await asyncio.sleep(POLL)
            if load.pending:
                # One array literal joined in C, not a list adapted item by item.
                ids = "{" + ",".join(load.pending) + "}"
                rows = await (await conn.execute(
                    "SELECT id::text FROM runs_run WHERE id = ANY(%s::uuid[]) "
                    "AND finished_at IS NOT NULL", [ids])).fetchall()
                for (run_id,) in rows:
                    ended(load, str(run_id))


async def settle(dsn: str, load: Load, latency: float) -> None:
    """After the load: each run's status and end stored by the runner, in one query, and
    the figures that need them."""
    ids = "{" + ",".join(run.run_id for run in load.runs) + "}"
    async with bench_connection(dsn, load) as conn:
        rows = await (await conn.execute(
            "SELECT id::text, status, extract(epoch FROM finished_at)::float8, "
            "coalesce(error->>'code', '') FROM runs_run WHERE id = ANY(%s::uuid[])",
            [ids])).fetchall()
    ends = {str(run_id): (str(status), float(finished or 0.0), str(code))
            for run_id, status, finished, code in rows}
    settled = []
    for run in load.runs:
        status, finished, code = ends[run.run_id]
        settled.append(replace(run, finished=finished))
        load.spans.append((run.accepted, finished))
        if status == "completed":
            load.completed += 1
        else:
            load.failed += 1
            load.failures[f"{status}:{code}"] += 1
        load.added_runner.append((finished - run.sent - latency) * 1000)
    load.runs = settled


async def count_lost(dsn: str, seen: dict[str, set[int]]) -> int:
    """Stored events (the runs' logs) the followed streams did not deliver: one query
    for all of them, after the load."""
    if not seen:
        return 0
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        rows = await (await conn.execute(
            "SELECT run_id::text, seq FROM runs_runevent WHERE run_id = ANY(%s::uuid[])",
            [list(seen)])).fetchall()
    return sum(1 for run_id, seq in rows if int(seq) not in seen[str(run_id)])


@dataclass
class Lanes:
    """What every lane shares."""

    clients: list[AsyncClient]  # one per project, as its admin
    projects: list[Project]
    args: argparse.Namespace
    per_user: int  # KIONGA_MAX_STREAMS_PER_USER
    load: Load
    deadline: float
    followed: dict[int, int]  # followed_lanes


async def lane(index: int, lanes: Lanes) -> None:
    args, load = lanes.args, lanes.load
    count = len(lanes.projects)
    client, project = lanes.clients[index % count], lanes.projects[index % count]
    place = lanes.followed.get(index)
    watcher = None if place is None else watcher_of(place, lanes.projects, lanes.per_user)
    loop = asyncio.get_running_loop()
    if args.ramp:
        await asyncio.sleep(index * args.ramp / args.runs)
    for round_ in range(args.rounds):
        if round_ and time.monotonic() > lanes.deadline:
            return
        started = await start_run(client, project.design, f"lane {index} round {round_}",
                                  load, round_ == 0, lanes.deadline)
        if started is None:
            return
        run_id, sent, accepted = started
        future: asyncio.Future[None] = loop.create_future()
        load.pending[run_id] = future
        followed = None
        if watcher is not None:
            followed = await follow(client, project.design, run_id, watcher, load)
        await future
        arrived = None
        if followed is not None:
            seen, arrived = followed
            load.seen[run_id] = seen
            if arrived is not None:
                load.added_sse.append((arrived - sent - args.latency) * 1000)
        load.runs.append(RunTimes(index, run_id, sent, accepted, arrived))


def lane_rates(runs: list[RunTimes], begin: float, end: float) -> float:
    """Runs per second of all lanes together: each lane's cycles (one run sent to the
    lane's next run sent) within [begin, end], as cycles per second of their total."""
    by_lane: dict[int, list[float]] = {}
    for run in sorted(runs, key=lambda run: run.sent):
        by_lane.setdefault(run.lane, []).append(run.sent)
    rate = 0.0
    for sent in by_lane.values():
        cycles = [after - before for before, after in itertools.pairwise(sent)
                  if before >= begin and after <= end]
        if cycles:
            rate += len(cycles) / sum(cycles)
    return rate


def steady(runs: list[RunTimes], lanes: int, latency: float) -> dict[str, Any]:
    """The figures of the steady part of the load: from the moment every lane has had
    a run accepted (the first burst absorbed) to the moment the first lane is done (the
    load starts to drain). Throughput is each lane's rate over its cycles (a run sent to
    the lane's next run sent) that lie in the window, summed over the lanes: a lane
    keeps one run in flight, so its cycle is what the stack gives it. The runs that
    ended in the window, over its length, is `steady_window_runs_per_s`: the lanes'
    runs end in waves (their first runs started together), and a window edge that cuts
    a wave biases that count by up to a wave. Added latency: the runs sent and ended in
    the window. Empty when the window is shorter than one upstream latency (too few
    rounds to have one)."""
    firsts: dict[int, float] = {}
    lasts: dict[int, float] = {}
    for run in runs:
        firsts[run.lane] = min(firsts.get(run.lane, run.accepted), run.accepted)
        lasts[run.lane] = max(lasts.get(run.lane, run.finished), run.finished)
    if len(firsts) < lanes:
        return {}
    begin, end = max(firsts.values()), min(lasts.values())
    if end - begin < latency:
        return {}
    ended = [run for run in runs if begin <= run.finished <= end]
    inside = [run for run in ended if run.sent >= begin]
    added = [(run.finished - run.sent - latency) * 1000 for run in inside]
    seen = [(run.arrived - run.sent - latency) * 1000 for run in inside
            if run.arrived is not None]
    rate = lane_rates(runs, begin, end)
    in_window = len(ended) / (end - begin)
    return {"steady_seconds": round(end - begin, 1), "steady_runs_per_s": round(rate, 2),
            "steady_throughput_ratio": round(rate / (lanes / latency), 3),
            "steady_window_runs_per_s": round(in_window, 2),
            "steady_window_ratio": round(in_window / (lanes / latency), 3),
            "steady_added_p50_ms": quantile(seen, 0.5),
            "steady_added_p99_ms": quantile(seen, 0.99),
            "steady_added_runner_p50_ms": quantile(added, 0.5),
            "steady_added_runner_p99_ms": quantile(added, 0.99)}


MEMBERS_EVERY = 60  # memory samples (30 s) between two looks for the groups' processes


async def sample_memory(stack: Stack, peaks: dict[str, int], stop: asyncio.Event) -> None:
    """The runner's and internal listener's resident peaks, every 0.5 s. Which processes
    each group holds is read from all of /proc only every MEMBERS_EVERY samples (the
    groups' processes live as long as the load): a pass over a busy machine's /proc
    cost the bench's client more than its requests."""
    groups = {name: stack.processes[name].pid for name in ("runner", "internal")}
    pids: dict[str, list[str]] = {}
    for sample in itertools.count():
        if stop.is_set():
            return
        if sample % MEMBERS_EVERY == 0:
            pids = members(groups)
        for name, group_pids in pids.items():
            peaks[name] = max(peaks.get(name, 0), rss_of(group_pids))
        await asyncio.sleep(0.5)


async def run_load(stack: Stack, clients: list[AsyncClient], projects: list[Project],
                   args: argparse.Namespace, dsn: str,
                   per_user: int) -> tuple[Load, float, dict[str, int]]:
    load, stop, listening = Load(), asyncio.Event(), asyncio.Event()
    peaks: dict[str, int] = {}
    listener = asyncio.create_task(listen_ends(stack.redis_url, load, listening, stop))
    await listening.wait()
    poller = asyncio.create_task(poll_ends(dsn, load, stop))
    sampler = asyncio.create_task(sample_memory(stack, peaks, stop))
    began = time.monotonic()
    lanes = Lanes(clients, projects, args, per_user, load, began + args.max_seconds,
                  followed_lanes(args.runs, args.sample, len(projects)))
    await asyncio.gather(*(lane(i, lanes) for i in range(args.runs)))
    elapsed = time.monotonic() - began
    stop.set()
    await asyncio.gather(listener, poller, sampler)
    await settle(dsn, load, args.latency)
    return load, elapsed, peaks


async def create_designs(clients: list[AsyncClient], projects: list[Project]) -> None:
    for client, project in zip(clients, projects, strict=True):
        project.design = await create_design(client, project, "slow", model_graph())


async def warm_up(stack: Stack, clients: list[AsyncClient], projects: list[Project],
                  args: argparse.Namespace, dsn: str, per_user: int) -> None:
    """Every process and connection warm: one slow run per project, followed."""
    warm = argparse.Namespace(**{**vars(args), "runs": 2, "rounds": 1, "sample": 2, "ramp": 0.0})
    await run_load(stack, clients, projects, warm, dsn, per_user)


def profilers(stack: Stack, out: Path) -> list[subprocess.Popen[bytes]]:
    """py-spy on the stack's Python processes, samples that hold the GIL only (a thread
    waiting on a socket is not CPU), as raw stacks in `out`/<name>.txt."""
    out.mkdir(parents=True, exist_ok=True)
    return [subprocess.Popen([str(VENV_BIN / "py-spy"), "record", "--pid",
                              str(stack.processes[name].pid), "--subprocesses", "--gil",
                              "--format", "raw", "--rate", "200", "-o", str(out / f"{name}.txt")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for name in ("gateway", "internal", "runner", "events")]


# The stack's processes: its figure leaves out the bench's own client (`client`), the
# database backend serving the client's poll of the runs' ends (`poll`) and the upstream.
STACK = ("gateway", "internal", "runner", "events", "worker", "redis", "postgres")


def load_meter(stack: Stack, upstream_pid: int) -> CpuMeter:
    """CPU of every process of the stack (process groups), of PostgreSQL's backends
    serving the bench database, of the slow upstream and of this client."""
    return CpuMeter({**{name: group(process.pid) for name, process in stack.processes.items()},
                     "postgres": postgres_backends(DB_NAME), "upstream": group(upstream_pid),
                     "client": this_process()})


def cpu_per_run(spent: dict[str, float], completed: int) -> dict[str, float]:
    """CPU ms per completed run of each process, the stack's sum (`stack`: without the
    bench's client, its poll and the upstream peer) and everything's (`all`)."""
    runs = max(1, completed)
    out = {name: round(ms / runs, 2) for name, ms in spent.items()}
    out["stack"] = round(sum(ms for name, ms in spent.items() if name in STACK) / runs, 2)
    out["all"] = round(sum(spent.values()) / runs, 2)
    return out


async def measure_load(stack: Stack, clients: list[AsyncClient],
                       projects: list[Project], args: argparse.Namespace, dsn: str,
                       per_user: int, idle: dict[str, int], upstream: str,
                       upstream_pid: int) -> dict[str, Any]:
    calibration = calibration_ms()
    meter = load_meter(stack, upstream_pid)
    spies = profilers(stack, args.profile) if args.profile else []
    load, elapsed, peaks = await run_load(stack, clients, projects, args, dsn, per_user)
    spent = {**meter.spent(), "poll": load.poll_ms}
    calibration_after = calibration_ms()
    for spy in spies:
        spy.send_signal(signal.SIGINT)
        spy.wait()
    cpu = cpu_per_run(spent, load.completed)
    in_flight = peak_overlap(load.spans)
    calls = (await upstream_stats(upstream))["peak_in_flight"]
    print(f"load: {in_flight} in flight at most, {load.refusals} refusals "
          f"({load.first_burst_refused} of the first {args.runs} starts), "
          f"{load.completed} completed in {elapsed:.1f} s; CPU ms per run {cpu} (the "
          f"stack's without the bench's client, its poll's database backend and the "
          f"upstream peer); calibration {calibration} ms before, {calibration_after} after",
          flush=True)
    return {
        "runs": args.runs, "latency": args.latency, "chunks": args.chunks,
        "in_flight": in_flight, "refusals": load.refusals,
        "first_burst_refused": load.first_burst_refused,
        "refusal_codes": dict(load.codes), "completed": load.completed,
        "failed": load.failed, "failures": dict(load.failures), "seconds": round(elapsed, 1),
        "runs_per_s": round(load.completed / elapsed, 2),
        # CPU ms per completed run by process; `stack` leaves out the client, its poll's
        # database backend and the upstream
        "cpu_ms_per_run": cpu, "calibration_ms": calibration,
        "calibration_ms_after": calibration_after,
        "throughput_ratio": round(load.completed / elapsed / (args.runs / args.latency), 3),
        "upstream_peak_in_flight": calls,
        "runner_rss_idle_mb": round(idle["runner"] / MB, 1),
        "runner_rss_peak_mb": round(peaks.get("runner", 0) / MB, 1),
        "internal_rss_idle_mb": round(idle["internal"] / MB, 1),
        "internal_rss_peak_mb": round(peaks.get("internal", 0) / MB, 1),
        "runner_mb_per_run": round(max(0, peaks.get("runner", 0) - idle["runner"])
                                   / MB / max(1, in_flight), 2),
        "internal_mb_per_call": round(max(0, peaks.get("internal", 0) - idle["internal"])
                                      / MB / max(1, calls), 2),
        "added_p50_ms": quantile(load.added_sse, 0.5),
        "added_p99_ms": quantile(load.added_sse, 0.99),
        "added_runner_p50_ms": quantile(load.added_runner, 0.5),
        "added_runner_p99_ms": quantile(load.added_runner, 0.99),
        "sse_followed": len(load.seen), "sse_lost": await count_lost(dsn, load.seen),
        "sse_refused": dict(load.sse_refused), "sse_resumed": load.sse_resumed,
        "sse_given_up": load.sse_given_up, "sse_deltas": load.deltas,
        "sse_watchers": sum(len(p.watchers) for p in projects), "sse_per_user": per_user,
        **steady(load.runs, args.runs, args.latency),
    }
