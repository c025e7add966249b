"""Traces of agent turns: the agent runtime (`python -m agents.serve`) with
OTEL_EXPORTER_OTLP_ENDPOINT set exports a `kionga.turn` span, child of the caller's
traceparent, and one `kionga.node` span per node (the turn span's children) to a
loopback OTLP receiver (tests/otlp_receiver.py); no attribute holds the turn's input,
the caller's key or the agent's credential."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
from django.contrib.auth.models import User

from deployments.models import Agent
from tests.e2e.test_e2e_agent_runtime import (
    caller,
    deployed,  # noqa: F401 (fixture)
    runtime_env,
    start_runtime,
    wait_healthy,
)
from tests.otlp_receiver import OtlpReceiver, ReceivedSpan
from tests.stack import Stack, free_port

pytestmark = pytest.mark.django_db(transaction=True)

CALLER_TRACE = "6" * 32
CALLER_SPAN = "00f067aa0ba902b7"
CANARY = "canary-turn-9d2e-refunds"



def turn_spans(receiver: OtlpReceiver, timeout: float = 30.0) -> list[ReceivedSpan]:
    deadline = time.monotonic() + timeout
    while True:
        found = [s for s in receiver.received() if s.trace_id == CALLER_TRACE]
        if any(s.name == "kionga.turn" for s in found):
            return found
        assert time.monotonic() < deadline, found
        time.sleep(0.1)


def test_a_turn_exports_its_span_and_its_nodes(
        stack: Stack, deployed: tuple[Agent, Path, str], carol: User,  # noqa: F811
        receiver: OtlpReceiver) -> None:
    agent, artifact, credential = deployed
    port = free_port()
    env = runtime_env(stack, artifact, credential, port)
    env.update(OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY="100")
    process = start_runtime(env)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, process)
        key = caller(carol, agent)
        answer = httpx.post(f"{url}/turns", json={"input": CANARY},
                            headers={**key, "traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"},
                            timeout=30).json()
        assert answer["status"] == "completed", answer
        spans = turn_spans(receiver)
    finally:
        process.terminate()
        process.wait(timeout=10)
    [turn] = [s for s in spans if s.name == "kionga.turn"]
    assert (turn.service, turn.parent_span_id) == ("kionga-agent", CALLER_SPAN)
    assert turn.attributes["kionga.turn.id"] == answer["turn_id"]
    assert turn.attributes["kionga.run.status"] == "completed"
    nodes = {s.attributes["kionga.node.id"]: s for s in spans if s.name == "kionga.node"}
    assert set(nodes) == {"input", "kb", "output"}
    assert all(s.parent_span_id == turn.span_id for s in nodes.values())
    assert nodes["kb"].attributes["kionga.node.kind"] == "knowledge"
    hidden = [CANARY, credential, key["Authorization"].split()[-1]]
    for span in spans:
        text = json.dumps(span.attributes, default=str)
        assert not any(secret in text for secret in hidden), span

