"""The demo's way to deploy (bin/demo): no Kubernetes, KIONGA_LOCAL_AGENTS_DIR set. A
deploy through the API writes the agent's folder; `python -m agents.local` runs it on
this machine against the live gateway; a caller with an API key gets its turn, and a
roll forward is served by the new version."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
from django.contrib.auth.models import User

from deployments.local import agent_url
from kionga.models import Project
from runs.models import Run
from tests.agent_local_helpers import until
from tests.stack import ROOT, Stack
from tests.versions_helpers import prompt_graph, publish, published, save


def test_a_version_deployed_locally_answers_its_callers(
        stack: Stack, api: Any, carol: User, acme: Project, settings: Any,
        tmp_path: Path) -> None:
    settings.KIONGA_NATIVE_AGENT_IMAGE, settings.KIONGA_LOCAL_AGENTS_DIR = "", str(tmp_path)
    client = api.client_for(carol)
    version = published(carol, acme, prompt_graph("Local: {input}"))
    agent = client.post(f"/api/v1/agent-versions/{version.pk}/deploy", {},
                        format="json").json()
    key = client.post(f"/api/v1/agents/{agent['id']}/api-keys", {"name": "demo"},
                      format="json").json()["key"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO"))}
    env.update(KIONGA_AGENT_GATEWAY_URL=f"http://127.0.0.1:{stack.internal_port}/api/v1",
               MLAIOPS_LLM_BACKEND="mock")
    runner = subprocess.Popen([sys.executable, "-m", "agents.local", str(tmp_path)], cwd=ROOT,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = agent_url(str(tmp_path), agent["name"])
    headers = {"Authorization": f"Bearer {key}"}

    def health() -> dict[str, Any] | None:
        try:
            return dict(httpx.get(f"{url}/healthz", timeout=1).json())
        except httpx.HTTPError:
            return None

    try:
        assert until(health)["version_id"] == str(version.pk)
        answer = httpx.post(f"{url}/turns", json={"input": "hi"}, headers=headers,
                            timeout=30).json()
        assert (answer["status"], answer["output"]) == ("completed", "Local: hi")
        assert Run.objects.get(pk=answer["turn_id"]).agent_id is not None

        second = publish(carol, save(carol, version.design, prompt_graph("Again: {input}")))
        assert client.post(f"/api/v1/agent-versions/{second.pk}/deploy", {},
                           format="json").status_code == 200
        until(lambda: (health() or {}).get("version_id") == str(second.pk))
        again = httpx.post(f"{url}/turns", json={"input": "hi"}, headers=headers,
                           timeout=30).json()
        assert again["output"] == "Again: hi"
    finally:
        runner.send_signal(signal.SIGTERM)
        runner.wait(timeout=40)
