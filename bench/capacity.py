"""Benchmark of waiting work (not a test): starts the real stack at its default settings,
measures, stops it.

    .venv/bin/python bench/capacity.py [--runs N] [--latency S] [--chunks C] [--sample K]

Starts, as the Procfile does, the gateway, internal listener, event ingester, the
gateway's worker and the runner (tests/stack.py, without its test-size capacity:
KIONGA_DESIGNER_MAX_RUNS and the runner's pool come from the product's defaults unless
this shell sets them), and an OpenAI-compatible upstream on loopback that streams its
answer over `--latency` seconds in `--chunks` pieces (tests/slow_upstream.py, a process
of its own). Each of two projects gets a model resource `slow` pointing at it and a
design input → model (`slow`) → output. Then:

1. load: N lanes (alternating projects) each start a run, wait for its end and start
   another, `--rounds` times (no new start after `--max-seconds`). A start refused
   with 429 is counted and tried again after a pause (0.25 s doubling to 2 s), as a
   client would. `--sample` lanes follow their runs over SSE; the others learn the end
   from the database.
   - in_flight: the most runs accepted (201) and not ended (their terminal event's
     time) at once; refusals: 429 answers (first_burst_refused: how many of the N
     first simultaneous starts got one; refusal_codes, failures: by code);
   - throughput_ratio: completed runs per second ÷ (N / latency), 1.0 being every lane
     busy all the time;
   - runner_mb_per_run / internal_mb_per_call: resident memory (RSS, all processes of
     the runner's / internal listener's process group, /proc) at its peak during the
     load above its idle level after warm-up, ÷ in_flight / ÷ the upstream's peak of
     calls in flight (the idle and peak figures are reported too: a pool that reserves
     its memory up front shows little above idle);
   - added_p50_ms / added_p99_ms: end to end (POST → the terminal event on SSE, the
     followed runs) minus the upstream's latency; added_runner_*: the same for every
     run up to the runner's terminal event time, as stored;
   - sse_lost: stored events (the run's log in the database) a followed stream did not
     deliver; sse_deltas: node.delta frames the followed streams carried.
2. approvals: project A starts runs of input → approval → output (up to `--approvals`)
   until one is refused; approval_waiting_runs is how many of them wait on a person
   while the project can still start a run (checked with one more run), and
   approval_waiting_mb the resident memory of all the stack's processes above idle.
   They are cancelled after.
3. evaluation: project B evaluates `--eval-cases` judged cases (an instant graph; the
   judge is its model resource `judge` on the same upstream, answering after
   `--judge-latency` seconds): eval_judged_cases_per_s.

KIONGA_BENCH_DB names the database (default kionga_bench_capacity). The last line is one
JSON object of the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.stack import Stack  # noqa: E402

DB_NAME = os.environ.get("KIONGA_BENCH_DB", "kionga_bench_capacity")
PG = "postgres://postgres@127.0.0.1:5432"
PAGE = os.sysconf("SC_PAGE_SIZE")
MB = 1024 * 1024
RETRY_PAUSE = 0.25  # after a 429 (the answers carry no Retry-After), doubling ...
MAX_RETRY_PAUSE = 2.0  # ... up to this
POLL = 0.1  # the database poll that sees the ends of the runs nobody follows
TERMINAL = ("run.completed", "run.failed", "run.cancelled")
JUDGE_ANSWER = json.dumps({"scores": {"task_completion": 0.9}, "reason": "It answers."})
MAX_CASES_PER_DESIGN = 100  # evaluations.serializers.MAX_CASES


def model_graph() -> dict[str, Any]:
    return {"schema_version": 2,
            "nodes": [{"id": "input", "kind": "input"},
                      {"id": "model", "kind": "model", "config": {"model": "slow"}},
                      {"id": "output", "kind": "output"}],
            "edges": [{"from": "input", "to": "model"}, {"from": "model", "to": "output"}],
            "settings": {"timeout_seconds": 300}}


def approval_graph() -> dict[str, Any]:
    return {"schema_version": 2,
            "nodes": [{"id": "input", "kind": "input"},
                      {"id": "gate", "kind": "approval", "config": {"message": "Go?"}},
                      {"id": "output", "kind": "output"}],
            "edges": [{"from": "input", "to": "gate"},
                      {"from": "gate", "to": "output", "from_port": "approved"}],
            "settings": {"timeout_seconds": 300}}


def instant_graph() -> dict[str, Any]:
    return {"schema_version": 2,
            "nodes": [{"id": "input", "kind": "input"},
                      {"id": "answer", "kind": "prompt",
                       "config": {"template": "Answer: {input}"}},
                      {"id": "output", "kind": "output"}],
            "edges": [{"from": "input", "to": "answer"}, {"from": "answer", "to": "output"}]}


class DefaultStack(Stack):
    """tests/stack.py's stack at the product's capacity defaults: no
    KIONGA_DESIGNER_MAX_RUNS of its own and no --concurrency for the runner's pool
    (unless this shell sets KIONGA_DESIGNER_MAX_RUNS)."""

    def env(self) -> dict[str, str]:
        env = super().env()
        if "KIONGA_DESIGNER_MAX_RUNS" in os.environ:
            env["KIONGA_DESIGNER_MAX_RUNS"] = os.environ["KIONGA_DESIGNER_MAX_RUNS"]
        else:
            env.pop("KIONGA_DESIGNER_MAX_RUNS", None)
        return env

    def runner_command(self) -> list[str]:
        command = super().runner_command()
        if "--concurrency" in command:
            at = command.index("--concurrency")
            del command[at:at + 2]
        return command


# ---------------------------------------------------------------- set-up


def manage(env: dict[str, str], *args: str) -> str:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True).stdout


def fresh_database(env: dict[str, str]) -> None:
    subprocess.run(["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", DB_NAME],
                   check=True)
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", DB_NAME], check=True)
    manage(env, "migrate", "-v", "0")


@dataclass
class Project:
    id: int
    token: str
    name: str
    design: str = ""


def bootstrap(env: dict[str, str], name: str) -> Project:
    doc = json.loads(manage(env, "bootstrap", "--project", name, "--user", name, "--role",
                            "admin", "--json"))
    return Project(int(doc["project_id"]), str(doc["token"]), name)


def add_models(env: dict[str, str], projects: list[Project], url: str) -> None:
    """A model resource `slow` in every project and `judge` in the last, on the upstream
    (only the admin creates resources: through the ORM, as the admin would)."""
    code = (
        "from kionga.resource_models import ModelEndpoint\n"
        f"for pid in {[p.id for p in projects]!r}:\n"
        f"    ModelEndpoint.objects.create(project_id=pid, key='slow', base_url={url!r}, "
        "model_name='slow', secret='sk-bench-0123456789abcdef')\n"
        f"ModelEndpoint.objects.create(project_id={projects[-1].id}, key='judge', "
        f"base_url={url!r}, model_name='judge', secret='sk-bench-0123456789abcdef')\n")
    manage(env, "shell", "-c", code)


def start_upstream(args: argparse.Namespace) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.slow_upstream", "--latency", str(args.latency),
         "--chunks", str(args.chunks),
         "--reply", f"judge:{args.judge_latency}:4:{JUDGE_ANSWER}"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        start_new_session=True)
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http"):
        raise RuntimeError(f"the slow upstream did not start: {url!r}")
    return process, url


# ---------------------------------------------------------------- memory (/proc)


def rss_of_group(pgid: int) -> int:
    """Resident bytes of every live process of the process group."""
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            if stat[stat.rindex(")") + 2:].split()[2] != str(pgid):
                continue
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
        except (OSError, ValueError, IndexError):
            continue
    return total


def rss(stack: Stack, names: tuple[str, ...]) -> dict[str, int]:
    return {name: rss_of_group(stack.processes[name].pid) for name in names
            if name in stack.processes}


# ---------------------------------------------------------------- the load


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))], 1)


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
    stream_errors: int = 0
    # run ID → future of (status, runner's end time as epoch s), set by the poller
    pending: dict[str, asyncio.Future[tuple[str, float]]] = field(default_factory=dict)


HTTP_ERRORS = [0]  # requests that failed for the transport (a reset, a timeout), retried


async def call(client: httpx.AsyncClient, method: str, url: str,
               **kwargs: Any) -> httpx.Response:
    """One request, tried again (up to 5 times) when the transport fails: counted in
    HTTP_ERRORS, never a crash of the benchmark."""
    for attempt in range(5):
        try:
            return await client.request(method, url, **kwargs)
        except httpx.TransportError:
            HTTP_ERRORS[0] += 1
            if attempt == 4:
                raise
            await asyncio.sleep(0.5)
    raise AssertionError("unreachable")


def peak_overlap(spans: list[tuple[float, float]]) -> int:
    """The most spans that overlap at one instant."""
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans],
                   key=lambda edge: (edge[0], edge[1]))  # an end before a start at a tie
    peak = now = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    return peak


async def start_run(client: httpx.AsyncClient, design: str, text: str, load: Load,
                    first: bool, deadline: float) -> tuple[str, float, float] | None:
    """(run ID, epoch s its accepted POST was sent, and answered), trying again after
    each 429; None when the deadline passed before a start was accepted."""
    tries = 0
    while True:
        sent = time.time()
        response = await call(client, "POST", f"/api/v1/agent-designs/{design}/runs",
                              json={"input": text})
        if response.status_code == 201:
            return str(response.json()["id"]), sent, time.time()
        if response.status_code != 429:
            raise RuntimeError(f"start answered {response.status_code}: {response.text}")
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


async def follow(client: httpx.AsyncClient, design: str, run_id: str,
                 load: Load) -> tuple[set[int], float | None]:
    """The stored events' seqs a stream delivered, and when its terminal event arrived."""
    seen: set[int] = set()
    ended: float | None = None
    kind, data, has_id = "message", "", False
    url = f"/api/v1/agent-designs/{design}/runs/{run_id}/events"
    async with client.stream("GET", url, headers={"Accept": "text/event-stream"}) as response:
        if response.status_code != 200:
            raise RuntimeError(f"events answered {response.status_code}")
        async for line in response.aiter_lines():
            if line == "":
                if data:
                    doc = json.loads(data)
                    if kind == "delta":
                        load.deltas += 1
                    elif has_id and isinstance(doc.get("seq"), int):
                        seen.add(doc["seq"])
                        if doc.get("type") in TERMINAL:
                            ended = time.time()
                kind, data, has_id = "message", "", False
            elif line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                data += line[6:]
            elif line.startswith("id: "):
                has_id = True
    return seen, ended


async def poll_ends(dsn: str, load: Load, stop: asyncio.Event) -> None:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        while not stop.is_set():
            ids = [run_id for run_id, future in load.pending.items() if not future.done()]
            if ids:
                rows = await (await conn.execute(
                    "SELECT id::text, status, extract(epoch FROM finished_at)::float8, "
                    "coalesce(error->>'code', '') FROM runs_run WHERE id = ANY(%s::uuid[]) "
                    "AND finished_at IS NOT NULL", [ids])).fetchall()
                for run_id, status, finished, code in rows:
                    future = load.pending.get(run_id)
                    if future is not None and not future.done():
                        future.set_result((str(status) if status == "completed" else
                                           f"{status}:{code}", float(finished)))
            await asyncio.sleep(POLL)


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


async def lane(index: int, clients: list[httpx.AsyncClient], projects: list[Project],
               args: argparse.Namespace, load: Load, dsn: str, deadline: float) -> None:
    client, project = clients[index % 2], projects[index % 2]
    loop = asyncio.get_running_loop()
    for round_ in range(args.rounds):
        if round_ and time.monotonic() > deadline:
            return
        started = await start_run(client, project.design, f"lane {index} round {round_}",
                                  load, round_ == 0, deadline)
        if started is None:
            return
        run_id, sent, accepted = started
        future: asyncio.Future[tuple[str, float]] = loop.create_future()
        load.pending[run_id] = future
        if index < args.sample:
            try:
                seen, arrived = await follow(client, project.design, run_id, load)
            except (httpx.HTTPError, RuntimeError):
                load.stream_errors += 1
                seen, arrived = set(), None
        status, finished = await future
        load.spans.append((accepted, finished))
        if status == "completed":
            load.completed += 1
        else:
            load.failed += 1
            load.failures[status] += 1
        load.added_runner.append((finished - sent - args.latency) * 1000)
        if index < args.sample:
            load.seen[run_id] = seen
            if arrived is not None:
                load.added_sse.append((arrived - sent - args.latency) * 1000)


async def sample_memory(stack: Stack, peaks: dict[str, int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        for name, value in rss(stack, ("runner", "internal")).items():
            peaks[name] = max(peaks.get(name, 0), value)
        await asyncio.sleep(0.5)


async def upstream_stats(url: str) -> dict[str, int]:
    async with httpx.AsyncClient() as client:
        return dict((await client.get(url.removesuffix("/v1") + "/stats")).json())


async def run_load(stack: Stack, clients: list[httpx.AsyncClient], projects: list[Project],
                   args: argparse.Namespace, dsn: str) -> tuple[Load, float, dict[str, int]]:
    load, stop = Load(), asyncio.Event()
    peaks: dict[str, int] = {}
    poller = asyncio.create_task(poll_ends(dsn, load, stop))
    sampler = asyncio.create_task(sample_memory(stack, peaks, stop))
    began = time.monotonic()
    deadline = began + args.max_seconds
    await asyncio.gather(*(lane(i, clients, projects, args, load, dsn, deadline)
                           for i in range(args.runs)))
    elapsed = time.monotonic() - began
    stop.set()
    await asyncio.gather(poller, sampler)
    return load, elapsed, peaks


# ---------------------------------------------------------------- approvals


async def hold_approvals(stack: Stack, client: httpx.AsyncClient, project: Project,
                         args: argparse.Namespace, dsn: str,
                         idle_total: int) -> dict[str, Any]:
    gated = await create_design(client, project, "approvals", approval_graph())
    probe = await create_design(client, project, "probe", instant_graph())
    accepted: list[str] = []
    refused = False
    while len(accepted) < args.approvals and not refused:  # one at a time: unambiguous
        answer = await call(client, "POST", f"/api/v1/agent-designs/{gated}/runs",
                            json={"input": f"wait {len(accepted)}"})
        if answer.status_code == 201:
            accepted.append(str(answer.json()["id"]))
        elif answer.status_code == 429:
            refused = True
        else:
            raise RuntimeError(f"start answered {answer.status_code}: {answer.text}")
    waiting = await wait_waiting(dsn, accepted, timeout=60)
    total = sum(rss(stack, tuple(stack.processes)).values())
    answer = await call(client, "POST", f"/api/v1/agent-designs/{probe}/runs",
                        json={"input": "probe"})
    if answer.status_code == 201:
        held = waiting
    elif answer.status_code == 429:
        # The last start accepted was made with one fewer waiting.
        held = max(0, waiting - 1)
    else:
        raise RuntimeError(f"probe answered {answer.status_code}: {answer.text}")
    await asyncio.gather(*(call(client, "POST",
                                f"/api/v1/agent-designs/{gated}/runs/{run_id}/cancel")
                           for run_id in accepted))
    await wait_ended(dsn, accepted, timeout=60)
    return {"approval_waiting_runs": held, "approval_started": len(accepted),
            "approval_refused": refused,
            "approval_waiting_mb": round((total - idle_total) / MB, 1)}


async def wait_waiting(dsn: str, ids: list[str], timeout: float) -> int:
    """How many of `ids` wait on a person (all of them, or as many as after `timeout`)."""
    deadline = time.monotonic() + timeout
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        while True:
            row = await (await conn.execute(
                "SELECT count(*) FROM runs_run WHERE id = ANY(%s::uuid[]) AND status = "
                "'waiting'", [ids])).fetchone()
            count = int(row[0]) if row else 0
            if count == len(ids) or time.monotonic() > deadline:
                return count
            await asyncio.sleep(0.2)


async def wait_ended(dsn: str, ids: list[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        while time.monotonic() < deadline:
            row = await (await conn.execute(
                "SELECT count(*) FROM runs_run WHERE id = ANY(%s::uuid[]) AND finished_at IS "
                "NULL", [ids])).fetchone()
            if not row or not row[0]:
                return
            await asyncio.sleep(0.2)


# ---------------------------------------------------------------- evaluation


async def evaluate(client: httpx.AsyncClient, project: Project,
                   args: argparse.Namespace) -> dict[str, Any]:
    """Judged cases in designs of at most MAX_CASES_PER_DESIGN, evaluated together."""
    designs = []
    for first in range(0, args.eval_cases, MAX_CASES_PER_DESIGN):
        count = min(MAX_CASES_PER_DESIGN, args.eval_cases - first)
        design = await create_design(client, project, f"judged {first}", instant_graph())
        cases = [{"id": f"case-{i}", "name": f"case {i}", "input": f"question {i}",
                  "tags": ["judged"], "history": [],
                  "expected": {"calls": ["answer"],
                               "judge": {"criteria": ["task_completion"], "min_score": 0.7}}}
                 for i in range(first, first + count)]
        put = await call(client, "PUT", f"/api/v1/agent-designs/{design}/fixtures",
                         json={"revision": 0, "cases": cases})
        if put.status_code != 200:
            raise RuntimeError(f"fixtures answered {put.status_code}: {put.text}")
        designs.append(design)
    began = time.monotonic()
    urls = []
    for design in designs:
        started = await call(client, "POST", f"/api/v1/agent-designs/{design}/evaluations",
                             json={})
        if started.status_code != 201:
            raise RuntimeError(f"evaluation answered {started.status_code}: {started.text}")
        urls.append(f"/api/v1/agent-evaluations/{started.json()['id']}")
    results: dict[str, dict[str, Any]] = {}
    while len(results) < len(urls) and time.monotonic() - began < args.eval_timeout:
        for url in urls:
            if url not in results:
                got = (await call(client, "GET", url)).json()
                if got["status"] not in ("queued", "running"):
                    results[url] = got
        await asyncio.sleep(0.1)
    seconds = time.monotonic() - began
    done = sum(r["counts"]["passed"] + r["counts"]["failed"] for r in results.values())
    passed = sum(r["counts"]["passed"] for r in results.values())
    return {"eval_cases": args.eval_cases, "eval_judge_latency": args.judge_latency,
            "eval_seconds": round(seconds, 2), "eval_cases_done": done,
            "eval_cases_passed": passed, "eval_finished": len(results) == len(urls),
            "eval_judged_cases_per_s": round(done / seconds, 2)}


async def create_design(client: httpx.AsyncClient, project: Project, name: str,
                        graph: dict[str, Any]) -> str:
    response = await call(client, "POST", "/api/v1/agent-designs", json={
        "project_id": project.id, "name": name, "graph": graph})
    if response.status_code != 201:
        raise RuntimeError(f"design answered {response.status_code}: {response.text}")
    return str(response.json()["id"])


# ---------------------------------------------------------------- main


async def measure(stack: Stack, projects: list[Project], upstream: str,
                  args: argparse.Namespace) -> dict[str, Any]:
    dsn = f"{PG}/{DB_NAME}"
    room = args.runs + args.sample + 50
    limits = httpx.Limits(max_connections=room, max_keepalive_connections=room)
    timeout = httpx.Timeout(60.0, read=args.latency + 120.0)
    clients = [httpx.AsyncClient(base_url=stack.base_url, limits=limits, timeout=timeout,
                                 headers={"Authorization": f"Bearer {p.token}"})
               for p in projects]
    try:
        for client, project in zip(clients, projects, strict=True):
            project.design = await create_design(client, project, "slow", model_graph())
        # Warm up every process and connection: one slow run per project.
        warm = argparse.Namespace(**{**vars(args), "runs": 2, "rounds": 1, "sample": 2})
        await run_load(stack, clients, projects, warm, dsn)
        await asyncio.sleep(1.0)
        idle = rss(stack, tuple(stack.processes))
        load, elapsed, peaks = await run_load(stack, clients, projects, args, dsn)
        in_flight = peak_overlap(load.spans)
        calls = (await upstream_stats(upstream))["peak_in_flight"]
        figures: dict[str, Any] = {
            "runs": args.runs, "latency": args.latency, "chunks": args.chunks,
            "in_flight": in_flight, "refusals": load.refusals,
            "first_burst_refused": load.first_burst_refused,
            "refusal_codes": dict(load.codes), "completed": load.completed,
            "failed": load.failed, "failures": dict(load.failures), "seconds": round(elapsed, 1),
            "runs_per_s": round(load.completed / elapsed, 2),
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
            "added_p50_ms": pct(load.added_sse, 0.5), "added_p99_ms": pct(load.added_sse, 0.99),
            "added_runner_p50_ms": pct(load.added_runner, 0.5),
            "added_runner_p99_ms": pct(load.added_runner, 0.99),
            "sse_followed": len(load.seen), "sse_lost": await count_lost(dsn, load.seen),
            "sse_deltas": load.deltas,
            "sse_stream_errors": load.stream_errors,
        }
        print(f"load: {in_flight} in flight at most, {load.refusals} refusals "
              f"({load.first_burst_refused} of the first {args.runs} starts), "
              f"{load.completed} completed in {elapsed:.1f} s", flush=True)
        figures |= await hold_approvals(stack, clients[0], projects[0], args, dsn,
                                        sum(idle.values()))
        print(f"approvals: {figures['approval_waiting_runs']} waiting while the project "
              "still starts runs", flush=True)
        figures |= await evaluate(clients[1], projects[1], args)
        figures["http_errors"] = HTTP_ERRORS[0]
        return figures
    finally:
        for client in clients:
            await client.aclose()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40, help="lanes: runs kept in flight")
    parser.add_argument("--latency", type=float, default=5.0, help="upstream seconds")
    parser.add_argument("--chunks", type=int, default=20, help="pieces of a streamed answer")
    parser.add_argument("--sample", type=int, default=None,
                        help="lanes that follow their runs over SSE (default N/10, ≥ 10)")
    parser.add_argument("--rounds", type=int, default=2, help="runs per lane")
    parser.add_argument("--max-seconds", type=float, default=60.0,
                        help="no new start in the load after this")
    parser.add_argument("--approvals", type=int, default=None,
                        help="approval-waiting runs to try (default N)")
    parser.add_argument("--eval-cases", type=int, default=20)
    parser.add_argument("--judge-latency", type=float, default=2.0)
    parser.add_argument("--eval-timeout", type=float, default=120.0)
    args = parser.parse_args()
    if args.sample is None:
        args.sample = min(args.runs, max(10, args.runs // 10))
    args.sample = min(args.sample, args.runs)
    if args.approvals is None:
        args.approvals = args.runs
    # The model server is on loopback: the operator allows it (kionga.egress).
    stack = DefaultStack(database_url=f"{PG}/{DB_NAME}", log_dir=ROOT / "var" / "bench-logs",
                         gateway_workers=2, extra_env={
                             "KIONGA_EGRESS_ALLOW": "127.0.0.1",
                             # Room for the judge's latency and the stack's own overhead.
                             "KIONGA_JUDGE_TIMEOUT_SECONDS": str(int(args.judge_latency) + 10)})
    env = {**os.environ, **stack.env()}
    fresh_database(env)
    projects = [bootstrap(env, "bench-a"), bootstrap(env, "bench-b")]
    upstream, url = start_upstream(args)
    try:
        add_models(env, projects, url)
        stack.start()
        try:
            figures = asyncio.run(measure(stack, projects, url, args))
        finally:
            stack.stop()
    finally:
        upstream.terminate()
        upstream.wait()
    figures["at"] = datetime.now().isoformat(timespec="seconds")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
