"""The agent runtime as a plain process (`python -m agents.serve`) against the live
gateway: deployed through the loopback cluster, it verifies its artifact, serves a turn
that searches a knowledge base through the internal listener with the agent's
credential, reports it, and the turn shows up in operations. A tampered artifact never
starts; a revoked credential stops the next turn. Callers need an agent API key: none,
or a revoked one, is 401; a turn streams as Server-Sent Events; malformed body lengths
are 400."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User

from deployments.api_keys import do_create_key, do_revoke_key
from deployments.credentials import revoke_credentials
from deployments.deploy import DeployRequest, do_deploy
from deployments.models import Agent, AgentApiKey
from deployments.serializers import DEFAULT_AUTOSCALING, DEFAULT_RESOURCES
from kionga.models import Project
from kionga.resource_models import KnowledgeBase, KnowledgeDocument
from runs.models import Run
from tests.deploy_helpers import KB_GRAPH_NODE
from tests.k8s_peer import Peer
from tests.stack import ROOT, Stack, free_port
from tests.versions_helpers import linear, published


def runtime_env(stack: Stack, artifact: Path, credential: str, port: int,
                name: str = "agent") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO"))}
    env.update(KIONGA_AGENT_ARTIFACT=str(artifact), KIONGA_AGENT_CREDENTIAL=credential,
               KIONGA_AGENT_GATEWAY_URL=f"http://127.0.0.1:{stack.internal_port}/api/v1",
               KIONGA_AGENT_PORT=str(port), KIONGA_AGENT_NAME=name,
               MLAIOPS_LLM_BACKEND="mock")
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


def caller(user: User, agent: Agent) -> dict[str, str]:
    """The headers of a caller holding a new API key of the agent."""
    return {"Authorization": f"Bearer {do_create_key(user, agent, 'e2e', 600, None)['key']}"}


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
        key = caller(carol, agent)
        answer = httpx.post(f"{url}/turns", json={"input": "refunds", "session_id": "s1"},
                            headers=key, timeout=30).json()
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
        refused = httpx.post(f"{url}/turns", json={"input": "again"}, headers=key, timeout=30)
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


@pytest.fixture
def runtime(stack: Stack, deployed: tuple[Agent, Path, str]) -> Iterator[str]:
    """The running runtime's base URL."""
    agent, artifact, credential = deployed
    port = free_port()
    process = start_runtime(runtime_env(stack, artifact, credential, port, agent.name))
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, process)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_callers_need_a_live_key_of_the_agent(
        runtime: str, deployed: tuple[Agent, Path, str], carol: User) -> None:
    agent = deployed[0]
    turn = {"input": "refunds"}
    for headers in ({}, {"Authorization": "Bearer kak_forged"}, {"Authorization": "Basic x"}):
        refused = httpx.post(f"{runtime}/turns", json=turn, headers=headers, timeout=30)
        assert refused.status_code == 401, refused.text
        assert refused.json()["error"]["code"] == "invalid_api_key"
        assert refused.headers["WWW-Authenticate"] == 'Bearer realm="agent"'
    key = caller(carol, agent)
    assert httpx.post(f"{runtime}/turns", json=turn, headers=key,
                      timeout=30).json()["status"] == "completed"
    do_revoke_key(carol, agent, AgentApiKey.objects.get())
    revoked = httpx.post(f"{runtime}/turns", json=turn, headers=key, timeout=30)
    assert revoked.status_code == 401 and revoked.json()["error"]["code"] == "invalid_api_key"
    assert Run.objects.filter(agent=agent).count() == 1


def test_beyond_its_rate_a_key_is_429_with_retry_after(
        runtime: str, deployed: tuple[Agent, Path, str], carol: User) -> None:
    agent = deployed[0]
    key = {"Authorization": f"Bearer {do_create_key(carol, agent, 'slow', 1, None)['key']}"}
    assert httpx.get(f"{runtime}/v1/models", headers=key, timeout=30).status_code == 200
    refused = httpx.post(f"{runtime}/turns", json={"input": "x"}, headers=key, timeout=30)
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "throttled"
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert not Run.objects.filter(agent=agent).exists()


def test_a_turn_streams_its_events_and_deltas(
        runtime: str, deployed: tuple[Agent, Path, str], carol: User) -> None:
    agent = deployed[0]
    frames: list[tuple[str, dict[str, Any]]] = []
    with httpx.stream("POST", f"{runtime}/turns", json={"input": "refunds", "stream": True},
                      headers=caller(carol, agent), timeout=30) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        event = ""
        for line in response.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                frames.append((event, json.loads(line[6:])))
    names = [name for name, _ in frames]
    assert names[0] == "turn" and names[-1] == "answer" and "run.completed" in names
    assert "node.completed" in names
    turn_id = frames[0][1]["turn_id"]
    answer = frames[-1][1]
    assert answer["turn_id"] == turn_id and answer["status"] == "completed"
    assert "Refunds are paid within 14 days." in answer["output"]
    assert Run.objects.get(pk=turn_id).status == "completed"


# A length past what the parser's number holds is malformed (400, httptools); one that
# fits but is above the body limit is 413.
@pytest.mark.parametrize("length", [b"-1", b"+5", b"abc", b"99999999999999999999", b"2000000"])
def test_malformed_or_huge_body_lengths_are_refused(
        runtime: str, deployed: tuple[Agent, Path, str], carol: User, length: bytes) -> None:
    port = int(runtime.rsplit(":", 1)[1])
    key = caller(carol, deployed[0])["Authorization"].encode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"POST /turns HTTP/1.1\r\nHost: x\r\nAuthorization: " + key +
                     b"\r\nContent-Type: application/json\r\nContent-Length: " + length +
                     b"\r\n\r\n{}")
        status = sock.recv(4096).split(b"\r\n", 1)[0]
    expected = b"413" if length == b"2000000" else b"400"
    assert expected in status, status
    assert not Run.objects.filter(agent=deployed[0]).exists()
