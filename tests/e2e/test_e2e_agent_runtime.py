"""The agent runtime as a plain process (`python -m agents.serve`) against the live
gateway: deployed through the loopback cluster, it verifies its artifact, serves a turn
that searches a knowledge base through the internal listener with the agent's
credential, reports it, and the turn shows up in operations. A tampered artifact never
starts; a revoked credential stops the next turn."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User

from deployments.credentials import revoke_credentials
from deployments.deploy import DeployRequest, do_deploy
from deployments.models import Agent
from deployments.serializers import DEFAULT_AUTOSCALING, DEFAULT_RESOURCES
from kionga.models import Project
from kionga.resource_models import KnowledgeBase, KnowledgeDocument
from runs.models import Run
from tests.deploy_helpers import KB_GRAPH_NODE
from tests.k8s_peer import Peer
from tests.stack import ROOT, Stack, free_port
from tests.versions_helpers import linear, published


def runtime_env(stack: Stack, artifact: Path, credential: str, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO"))}
    env.update(KIONGA_AGENT_ARTIFACT=str(artifact), KIONGA_AGENT_CREDENTIAL=credential,
               KIONGA_AGENT_GATEWAY_URL=f"http://127.0.0.1:{stack.internal_port}/api/v1",
               KIONGA_AGENT_PORT=str(port), MLAIOPS_LLM_BACKEND="mock")
    return env


@pytest.fixture
def deployed(stack: Stack, carol: User, acme: Project, cluster: Peer,
             tmp_path: Path) -> Iterator[tuple[Agent, Path, str]]:
    kb = KnowledgeBase._default_manager.create(project=acme, key="handbook")
    KnowledgeDocument.objects.create(knowledge_base=kb, title="Refunds",
                                     text="Refunds are paid within 14 days.")
    version = published(carol, acme, linear(dict(KB_GRAPH_NODE)), name="Handbook agent")
    agent, _ = do_deploy(carol, version, DeployRequest(DEFAULT_AUTOSCALING, DEFAULT_RESOURCES,
                                                       False))
    # What the pod would mount and read: the applied ConfigMap and Secret.
    artifact = tmp_path / "artifact.json"
    artifact.write_text(cluster.applied("ConfigMap")[0]["data"]["artifact.json"])
    yield agent, artifact, cluster.applied("Secret")[0]["stringData"]["credential"]


def start_runtime(env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "agents.serve"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def wait_healthy(url: str, process: subprocess.Popen[bytes]) -> dict[str, Any]:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        try:
            return dict(httpx.get(f"{url}/healthz", timeout=1).json())
        except httpx.HTTPError:
            time.sleep(0.05)
    raise AssertionError("the runtime did not start")


def test_it_serves_a_turn_through_the_internal_listener(
        stack: Stack, deployed: tuple[Agent, Path, str], api: Any, carol: User) -> None:
    agent, artifact, credential = deployed
    port = free_port()
    process = start_runtime(runtime_env(stack, artifact, credential, port))
    try:
        url = f"http://127.0.0.1:{port}"
        health = wait_healthy(url, process)
        assert health["version_id"] == str(agent.version_id)
        answer = httpx.post(f"{url}/turns", json={"input": "refunds", "session_id": "s1"},
                            timeout=30).json()
        assert answer["status"] == "completed", answer
        assert "Refunds are paid within 14 days." in answer["output"]
        turn = Run.objects.get(pk=answer["turn_id"])
        assert (turn.agent_id, turn.status, turn.session_id) == (agent.pk, "completed", "s1")
        assert turn.latency_ms is not None and turn.created_by is None
        page = api.client_for(carol).get(f"/api/v1/agents/{agent.pk}/operations").json()
        assert page["totals"]["requests"] == 1 and page["totals"]["success_rate"] == 1.0
        assert page["recent_turns"][0]["id"] == answer["turn_id"]
        # Revoked: the gateway refuses the next turn, and the runtime says so.
        revoke_credentials(agent)
        refused = httpx.post(f"{url}/turns", json={"input": "again"}, timeout=30)
        assert refused.status_code == 503
        assert Run.objects.filter(agent=agent).count() == 1
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_it_refuses_a_tampered_artifact_at_startup(
        stack: Stack, deployed: tuple[Agent, Path, str]) -> None:
    _, artifact, credential = deployed
    doc = json.loads(artifact.read_text())
    doc["graph"]["nodes"][1]["config"]["limit"] = "20"
    artifact.write_text(json.dumps(doc))
    process = start_runtime(runtime_env(stack, artifact, credential, free_port()))
    output, _ = process.communicate(timeout=30)
    assert process.returncode == 2
    assert b"refusing to start: the graph does not match its content_sha256" in output
