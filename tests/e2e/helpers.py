"""Helpers of the end-to-end tests: graphs and waiting for a run to settle."""

from __future__ import annotations

import time
from typing import Any

from contracts.schemas import schema_errors

# The e2e tests' gated design is declared with the approvals helpers.
from tests.approvals_helpers import gated_graph as gated_graph
from tests.e2e.conftest import Http

FINAL = ("completed", "failed", "cancelled")


def approval_graph() -> dict[str, Any]:
    """input → approval → model → output: a run that waits for a person."""
    return {
        "schema_version": 2,
        "nodes": [
            {"id": "input", "kind": "input"},
            {"id": "gate", "kind": "approval",
             "config": {"message": "Send it?", "timeout_seconds": "120"}},
            {"id": "model", "kind": "model", "config": {"model": "llm"}},
            {"id": "output", "kind": "output"},
        ],
        "edges": [
            {"from": "input", "to": "gate"},
            {"from": "gate", "to": "model", "from_port": "approved"},
            {"from": "model", "to": "output"},
        ],
        "settings": {"timeout_seconds": 300},
    }


def schema_problems(events: list[dict[str, Any]]) -> list[str]:
    """Every stored event must follow run-event.v1, whoever wrote it (runner or gateway)."""
    return [p for e in events for p in schema_errors("run-event.v1", e)]


def wait_stored(http: Http, design_id: str, run_id: str, timeout: float = 20.0
                ) -> dict[str, Any]:
    """The run once its row is final and its terminal event is stored."""
    deadline = time.monotonic() + timeout
    while True:
        run = http.run(design_id, run_id)
        if run["status"] in FINAL and run["events"] and run["events"][-1]["type"].startswith(
                "run."):
            return run
        assert time.monotonic() < deadline, run
        time.sleep(0.05)


def wait_for(predicate: Any, timeout: float = 20.0, message: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, message or "timed out"
        time.sleep(0.05)
