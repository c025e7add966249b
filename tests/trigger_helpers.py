"""A deployed agent on the local runtime, reached by a private stack's gateway and
worker (tests of triggers/)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from django.contrib.auth.models import User

from deployments.deploy import DeployRequest, do_deploy
from deployments.local import agent_url
from deployments.models import Agent
from deployments.serializers import DEFAULT_AUTOSCALING, DEFAULT_RESOURCES
from kionga.models import Project
from tests.agent_local_helpers import until
from tests.stack import ROOT, Stack
from tests.versions_helpers import prompt_graph, published
from triggers.webhooks import DELIVERY_HEADER, SIGNATURE_HEADER, sign


def deploy_locally(user: User, project: Project, settings: Any, directory: Path,
                   template: str = "Hook: {input}") -> Agent:
    settings.KIONGA_NATIVE_AGENT_IMAGE, settings.KIONGA_LOCAL_AGENTS_DIR = "", str(directory)
    version = published(user, project, prompt_graph(template))
    agent, _ = do_deploy(user, version, DeployRequest(DEFAULT_AUTOSCALING, DEFAULT_RESOURCES,
                                                      False))
    return agent


@contextmanager
def local_runtimes(stack: Stack, directory: Path, agent: Agent) -> Iterator[str]:
    """`python -m agents.local <directory>` against the stack; the agent's URL once healthy."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO"))}
    env.update(KIONGA_AGENT_GATEWAY_URL=f"http://127.0.0.1:{stack.internal_port}/api/v1",
               MLAIOPS_LLM_BACKEND="mock")
    runner = subprocess.Popen([sys.executable, "-m", "agents.local", str(directory)],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    url = agent_url(str(directory), agent.name)
    assert url is not None

    def healthy() -> bool:
        try:
            return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        until(healthy)
        yield url
    finally:
        runner.terminate()  # it stops the runtimes it started
        runner.wait(timeout=20)


def signed(secret: str, body: bytes, delivery_id: str,
           at: int | None = None) -> dict[str, str]:
    stamp = int(time.time()) if at is None else at
    return {SIGNATURE_HEADER: sign(secret, stamp, body), DELIVERY_HEADER: delivery_id,
            "Content-Type": "application/json"}
