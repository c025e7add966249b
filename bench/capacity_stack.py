"""bench/capacity.py's stack and what its phases share: the product at its own capacity
defaults, the slow OpenAI-compatible upstream on loopback, the two projects with their
model resources and the users that watch their streams, memory from /proc, and the
HTTP calls every phase makes."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

from bench.cpu import group, rss_bytes
from bench.http_client import AsyncClient
from bench.stack_setup import ROOT, manage
from tests.stack import Stack

DB_NAME = os.environ.get("KIONGA_BENCH_DB", "kionga_bench_capacity")
MB = 1024 * 1024
JUDGE_ANSWER = json.dumps({"scores": {"task_completion": 0.9}, "reason": "It answers."})
BENCH_SECRET = "sk-bench-0123456789abcdef"


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


@dataclass
class Project:
    id: int
    token: str  # its admin's, who starts the runs
    name: str
    design: str = ""
    # API tokens of the project's viewers who follow its sampled runs over SSE, each
    # within KIONGA_MAX_STREAMS_PER_USER streams at once.
    watchers: list[str] = field(default_factory=list)


def instant_graph() -> dict[str, Any]:
    return {"schema_version": 2,
            "nodes": [{"id": "input", "kind": "input"},
                      {"id": "answer", "kind": "prompt",
                       "config": {"template": "Answer: {input}"}},
                      {"id": "output", "kind": "output"}],
            "edges": [{"from": "input", "to": "answer"}, {"from": "answer", "to": "output"}]}


def add_models(env: dict[str, str], projects: list[Project], url: str) -> None:
    """A model resource `slow` in every project and `judge` in the last, on the upstream
    (only the admin creates resources: through the ORM, as the admin would)."""
    code = (
        "from kionga.resource_models import ModelEndpoint\n"
        f"for pid in {[p.id for p in projects]!r}:\n"
        f"    ModelEndpoint.objects.create(project_id=pid, key='slow', base_url={url!r}, "
        f"model_name='slow', secret={BENCH_SECRET!r})\n"
        f"ModelEndpoint.objects.create(project_id={projects[-1].id}, key='judge', "
        f"base_url={url!r}, model_name='judge', secret={BENCH_SECRET!r})\n")
    manage(env, "shell", "-c", code)


def streams_per_user(env: dict[str, str]) -> int:
    """KIONGA_MAX_STREAMS_PER_USER as the stack's gateway reads it."""
    out = manage(env, "shell", "-c", "from django.conf import settings; "
                 "print(settings.KIONGA_MAX_STREAMS_PER_USER)")
    return int(out.strip().splitlines()[-1])


def add_watchers(env: dict[str, str], projects: list[Project], per_project: int) -> None:
    """`per_project` viewers in every project, each with an API token (one manage.py
    process for all of them)."""
    code = (
        "import json\n"
        "from django.contrib.auth.models import User\n"
        "from kionga.models import Membership\n"
        "from kionga.tokens import issue_token\n"
        "tokens = {}\n"
        f"for pid in {[p.id for p in projects]!r}:\n"
        f"    for n in range({per_project}):\n"
        "        user = User.objects.create(username=f'watcher-{pid}-{n}')\n"
        "        Membership.objects.create(project_id=pid, user=user, role='viewer')\n"
        "        tokens.setdefault(str(pid), []).append(issue_token(user, name='bench'))\n"
        "print(json.dumps(tokens))\n")
    tokens = json.loads(manage(env, "shell", "-c", code).strip().splitlines()[-1])
    for project in projects:
        project.watchers = list(tokens.get(str(project.id), []))


def start_upstream(args: argparse.Namespace) -> tuple[subprocess.Popen[str], str]:
    """tests/slow_upstream.py as a process of its own (its CPU stays out of the bench's):
    every model streams over --latency in --chunks pieces, `judge` answers the verdict
    after --judge-latency. Its base URL."""
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


async def upstream_stats(url: str) -> dict[str, int]:
    client = AsyncClient(url.removesuffix("/v1"))
    try:
        return dict((await client.json("GET", "/stats"))[1])
    finally:
        await client.aclose()


def rss(stack: Stack, names: tuple[str, ...]) -> dict[str, int]:
    """Resident bytes of each named process of the stack, with all its children."""
    return {name: rss_bytes(group(stack.processes[name].pid)) for name in names
            if name in stack.processes}


HTTP_ERRORS = [0]  # requests that failed for the transport (a reset, a timeout), retried


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"null")

    @property
    def text(self) -> str:
        return self.body.decode(errors="replace")


async def call(client: AsyncClient, method: str, path: str, body: Any = None) -> Answer:
    """One request, tried again (up to 5 times) when the transport fails: counted in
    HTTP_ERRORS, never a crash of the benchmark."""
    for attempt in range(5):
        try:
            return Answer(*await client.fetch(method, path, body))
        except OSError:  # ConnectionError, TimeoutError
            HTTP_ERRORS[0] += 1
            if attempt == 4:
                raise
            await asyncio.sleep(0.5)
    raise AssertionError("unreachable")


async def create_design(client: AsyncClient, project: Project, name: str,
                        graph: dict[str, Any]) -> str:
    response = await call(client, "POST", "/api/v1/agent-designs", {
        "project_id": project.id, "name": name, "graph": graph})
    if response.status != 201:
        raise RuntimeError(f"design answered {response.status}: {response.text}")
    return str(response.json()["id"])
