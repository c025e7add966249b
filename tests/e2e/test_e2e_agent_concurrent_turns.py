"""One runtime process holds many turns at once on its event loop: 40 callers at once
against a version whose model answers after some seconds are all in flight at the model
together, and all complete (opened and reported through the live gateway)."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from django.contrib.auth.models import User

from deployments.api_keys import do_create_key
from deployments.deploy import DeployRequest, do_deploy
from deployments.serializers import DEFAULT_AUTOSCALING, DEFAULT_RESOURCES
from kionga.models import Project
from runs.models import Run
from tests.e2e.test_e2e_agent_runtime import start_runtime, wait_healthy
from tests.k8s_peer import Peer
from tests.loopback import QuietHandler, serving
from tests.stack import Stack, free_port
from tests.versions_helpers import linear, published

TURNS = 40
# Long enough for the live gateway to open every turn before the first one ends.
SECONDS = 5.0
HELD = {"now": 0, "most": 0}
LOCK = threading.Lock()


class SlowModel(QuietHandler):
    """An OpenAI-compatible server answering each completion after SECONDS."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.read_body()
        with LOCK:
            HELD["now"] += 1
            HELD["most"] = max(HELD["most"], HELD["now"])
        time.sleep(SECONDS)
        with LOCK:
            HELD["now"] -= 1
        self.answer(200, {"choices": [{"index": 0, "finish_reason": "stop",
                                       "message": {"role": "assistant", "content": "ok"}}],
                          "usage": {"total_tokens": 3}})


def test_one_process_holds_many_turns_at_once(stack: Stack, carol: User, acme: Project,
                                               cluster: Peer, tmp_path: Path) -> None:
    version = published(carol, acme, linear({"id": "ask", "kind": "model",
                                             "config": {"model": "llm"}}), name="Slow")
    agent, _ = do_deploy(carol, version, DeployRequest(DEFAULT_AUTOSCALING,
                                                       DEFAULT_RESOURCES, False))
    artifact = tmp_path / "artifact.json"
    artifact.write_text(cluster.applied("ConfigMap")[0]["data"]["artifact.json"])
    credential = cluster.applied("Secret")[0]["stringData"]["credential"]
    key = do_create_key(carol, agent, "load", 1000, None)["key"]
    port = free_port()
    with serving(SlowModel) as model:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO"))}
        env.update(KIONGA_AGENT_ARTIFACT=str(artifact), KIONGA_AGENT_CREDENTIAL=credential,
                   KIONGA_AGENT_GATEWAY_URL=f"http://127.0.0.1:{stack.internal_port}/api/v1",
                   KIONGA_AGENT_PORT=str(port), MLAIOPS_LLM_BACKEND="openai",
                   MLAIOPS_LLM_MODEL="slow", MLAIOPS_LLM_BASE_URL=f"{model}/v1")
        process = start_runtime(env)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_healthy(url, process)

            async def all_at_once() -> list[dict[str, Any]]:
                async with httpx.AsyncClient(timeout=60, headers={
                        "Authorization": f"Bearer {key}"}) as client:
                    answers = await asyncio.gather(*(
                        client.post(f"{url}/turns", json={"input": f"q{i}"})
                        for i in range(TURNS)))
                return [json.loads(a.content) for a in answers]

            answers = asyncio.run(all_at_once())
        finally:
            process.terminate()
            process.wait(timeout=30)
    assert [a["status"] for a in answers] == ["completed"] * TURNS, answers[:3]
    assert HELD["most"] == TURNS
    assert Run.objects.filter(agent=agent, status="completed").count() == TURNS
