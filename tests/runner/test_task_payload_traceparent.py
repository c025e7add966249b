"""The signed task's optional `traceparent` (runner.tracing): the runner's run span is
its child. Kept only when shaped like W3C trace context; covered by the signature."""

from __future__ import annotations

from typing import Any

import pytest

from runner import task_signature
from runner.settings import load_settings
from runner.task_payload import parse_task
from runner.task_seal import seal

TOKEN = "runner-token-0123456789abcdef"
SETTINGS = load_settings({"KIONGA_DESIGNER_RUNNER_TOKEN": TOKEN, "MLAIOPS_LLM_BACKEND": "mock"})
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def payload(**extra: Any) -> dict[str, Any]:
    return {"run_id": "r1", "graph": {"nodes": [], "edges": []}, "callback_url": "http://gw",
            "sealed": seal({"credential": "krc_x", "event_key": "00", "lease": "l" * 32},
                         TOKEN, "r1"), **extra}


def test_a_traceparent_is_kept() -> None:
    assert parse_task(payload(traceparent=TRACEPARENT), SETTINGS).traceparent == TRACEPARENT


@pytest.mark.parametrize("value", [None, 7, "", "00-xyz", TRACEPARENT + "-extra",
                                   TRACEPARENT.upper(), "00-" + "0" * 80])
def test_anything_else_is_no_parent(value: Any) -> None:
    assert parse_task(payload(traceparent=value), SETTINGS).traceparent is None


def test_the_signature_covers_it() -> None:
    signed = payload(traceparent=TRACEPARENT)
    signature = task_signature.sign(signed, TOKEN)
    forged = {**signed, "traceparent": TRACEPARENT.replace("01", "00", 1)[:-2] + "00"}
    assert task_signature.opened(signed, signature, TOKEN) == signed
    assert task_signature.opened(forged, signature, TOKEN) is None
