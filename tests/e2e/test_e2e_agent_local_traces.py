"""A locally deployed agent (bin/demo: KIONGA_LOCAL_AGENTS_DIR, `python -m agents.local`)
exports its turns' traces as the gateway does: the deploy passes the gateway's OTEL_*
variables (not its service name) to the agent's process, whatever the runner of agents
was started with, and a turn's `kionga.turn` span reaches the loopback OTLP receiver as
the caller's span's child."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User

from deployments.local import agent_url
from kionga.models import Project
from tests.agent_local_helpers import until
from tests.otlp_receiver import OtlpReceiver
from tests.stack import ROOT, Stack
from tests.versions_helpers import prompt_graph, published

CALLER_TRACE = "8" * 32
CALLER_SPAN = "0123456789abcdef"



def test_a_locally_deployed_agent_exports_its_turns_spans(
        stack: Stack, api: Any, carol: User, acme: Project, settings: Any, tmp_path: Path,
        receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch) -> None:
    settings.KIONGA_NATIVE_AGENT_IMAGE, settings.KIONGA_LOCAL_AGENTS_DIR = "", str(tmp_path)
    # The gateway's trace settings (this process deploys, through the API).
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "kionga-gateway")
    client = api.client_for(carol)
    version = published(carol, acme, prompt_graph("Traced: {input}"))
    agent = client.post(f"/api/v1/agent-versions/{version.pk}/deploy", {},
                        format="json").json()
    key = client.post(f"/api/v1/agents/{agent['id']}/api-keys", {"name": "demo"},
                      format="json").json()["key"]
    # The runner of agents has no trace settings of its own (and a stale one is ignored).
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST", "DJANGO", "OTEL_"))}
    env.update(KIONGA_AGENT_GATEWAY_URL=f"http://127.0.0.1:{stack.internal_port}/api/v1",
               MLAIOPS_LLM_BACKEND="mock", OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9")
    runner = subprocess.Popen([sys.executable, "-m", "agents.local", str(tmp_path)], cwd=ROOT,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = agent_url(str(tmp_path), agent["name"])

    def healthy() -> bool:
        try:
            return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        until(healthy)
        answer = httpx.post(f"{url}/turns", json={"input": "hi"},
                            headers={"Authorization": f"Bearer {key}",
                                     "traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"},
                            timeout=30).json()
        assert answer["status"] == "completed", answer
        [turn] = until(lambda: [s for s in receiver.received() if s.name == "kionga.turn"])
    finally:
        runner.send_signal(signal.SIGTERM)
        runner.wait(timeout=40)
    assert (turn.service, turn.trace_id, turn.parent_span_id) == (
        "kionga-agent", CALLER_TRACE, CALLER_SPAN)
    assert turn.attributes["kionga.turn.id"] == answer["turn_id"]
