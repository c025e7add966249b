"""A canary end to end on the local runtime (KIONGA_LOCAL_AGENTS_DIR, `python -m
agents.local`) against the live gateway: a deploy with canary_percent restarts the agent
holding both verified versions; each session is served by the version its id hashes to,
every turn of it, and each turn records that version; the operations answer counts each
version's turns; promote leaves the canary's version alone; a rollback during a canary
leaves the agent's version alone. Another project's person finds no agent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User

from agents.canary import bucket_of
from deployments.local import agent_url
from kionga.models import Project
from runs.models import Run
from tests.agent_local_helpers import until
from tests.stack import ROOT, Stack
from tests.versions_helpers import prompt_graph, publish, published, save

PERCENT = 30
SESSIONS = [f"conversation-{i}" for i in range(40)]


@pytest.fixture
def local_runner(stack: Stack, settings: Any, tmp_path: Path) -> Iterator[Path]:
    settings.KIONGA_NATIVE_AGENT_IMAGE, settings.KIONGA_LOCAL_AGENTS_DIR = "", str(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO"))}
    env.update(KIONGA_AGENT_GATEWAY_URL=f"http://127.0.0.1:{stack.internal_port}/api/v1",
               MLAIOPS_LLM_BACKEND="mock")
    runner = subprocess.Popen([sys.executable, "-m", "agents.local", str(tmp_path)],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        yield tmp_path
    finally:
        runner.send_signal(signal.SIGTERM)
        runner.wait(timeout=40)


def test_a_canary_is_served_compared_promoted_and_rolled_back(
        local_runner: Path, api: Any, alice: User, mallory: User, acme: Project) -> None:
    client = api.client_for(alice)
    v1 = published(alice, acme, prompt_graph("One: {input}"))
    agent = client.post(f"/api/v1/agent-versions/{v1.pk}/deploy", {}, format="json").json()
    key = client.post(f"/api/v1/agents/{agent['id']}/api-keys",
                      {"name": "canary", "rate_per_minute": 600}, format="json").json()["key"]
    url = agent_url(str(local_runner), agent["name"])
    headers = {"Authorization": f"Bearer {key}"}

    def health() -> dict[str, Any]:
        try:
            return dict(httpx.get(f"{url}/healthz", timeout=1).json())
        except httpx.HTTPError:
            return {}

    def ask(session: str | None) -> dict[str, Any]:
        body = {"input": "hi", **({"session_id": session} if session else {})}
        answer = httpx.post(f"{url}/turns", json=body, headers=headers, timeout=30)
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    until(lambda: health().get("version_id") == str(v1.pk))
    save(alice, v1.design, prompt_graph("Two: {input}"))
    v2 = publish(alice, v1.design)
    started = client.post(f"/api/v1/agent-versions/{v2.pk}/deploy",
                          {"canary_percent": PERCENT}, format="json")
    assert started.status_code == 200, started.content
    until(lambda: (health().get("canary") or {}).get("version_id") == str(v2.pk))
    assert health()["version_id"] == str(v1.pk) and health()["canary"]["percent"] == PERCENT

    # Each session on the version its id hashes to, every turn; each turn records it.
    expected = {s: (v2 if bucket_of(s) < PERCENT else v1) for s in SESSIONS}
    served: dict[str, set[str]] = {s: set() for s in SESSIONS}
    for _ in range(2):
        for session in SESSIONS:
            answer = ask(session)
            version = expected[session]
            assert answer["version_id"] == str(version.pk)
            assert answer["output"] == ("Two: hi" if version == v2 else "One: hi")
            assert Run.objects.get(pk=answer["turn_id"]).version_id == str(version.pk)
            served[session].add(answer["output"])
    assert all(len(outputs) == 1 for outputs in served.values())
    to_canary = sum(version == v2 for version in expected.values())
    assert 0 < to_canary < len(SESSIONS)

    # Side by side: each version's turns as it served them.
    page = client.get(f"/api/v1/agents/{agent['id']}/operations?hours=1").json()
    assert [(v["role"], v["version"], v["requests"], v["errors"]) for v in page["versions"]] == [
        ("current", 1, 2 * (len(SESSIONS) - to_canary), 0), ("canary", 2, 2 * to_canary, 0)]
    assert all(v["latency_ms"]["p50"] is not None for v in page["versions"])

    outsider = api.client_for(mallory)
    assert outsider.post(f"/api/v1/agents/{agent['id']}/promote").status_code == 404
    assert outsider.get(f"/api/v1/agents/{agent['id']}/operations").status_code == 404

    # Promote: v2 serves every turn, the canary is gone.
    promoted = client.post(f"/api/v1/agents/{agent['id']}/promote")
    assert promoted.status_code == 200, promoted.content
    until(lambda: health().get("version_id") == str(v2.pk) and health().get("canary") is None)
    assert {ask(s)["output"] for s in SESSIONS[:10]} == {"Two: hi"}

    # A canary of v1 again, rolled back: v2 stays, alone.
    client.post(f"/api/v1/agent-versions/{v1.pk}/deploy", {"canary_percent": 50},
                format="json")
    until(lambda: (health().get("canary") or {}).get("version_id") == str(v1.pk))
    rolled = client.post(f"/api/v1/agents/{agent['id']}/rollback")
    assert rolled.status_code == 200, rolled.content
    assert (rolled.json()["version"], rolled.json()["canary"]) == (2, None)
    until(lambda: health().get("canary") is None and bool(health()))
    assert health()["version_id"] == str(v2.pk)
    assert {ask(None)["output"] for _ in range(10)} == {"Two: hi"}
