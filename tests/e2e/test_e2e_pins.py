"""Pinned outputs through the real processes, against a loopback OpenAI-compatible model
that counts its calls (input → prompt → model → model → output): a design run repeats a
pinned node's output without calling it; a version run and an evaluation never do."""

from __future__ import annotations

from typing import Any

import pytest

from runs.models import NodeRecord
from tests.conftest import Api
from tests.e2e.conftest import Http
from tests.e2e.helpers import schema_problems, wait_for, wait_stored
from tests.e2e.replay_kit import Upstream, model, run_to_end, two_models
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["model"]  # the fixture, used by name


def pin_url(design_id: str, node: str) -> str:
    return f"/api/v1/agent-designs/{design_id}/pins/{node}"


def test_a_design_run_repeats_a_pinned_output_without_calling(
        stack: Stack, api: Api, alice: Any, acme: Any, model: Upstream) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, two_models())
    pinned = http.client.put(pin_url(design_id, "m1"),
                             json={"port": "out", "value": "pinned one"})
    assert pinned.status_code == 200, pinned.text

    run = run_to_end(http, design_id, input="hello")
    assert run["status"] == "completed", run
    assert model.calls == 1, "only the second model is called"
    assert run["output"] == "answer 1: pinned one"
    m1 = next(e for e in run["events"] if e["type"] == "node.completed"
              and e["node_id"] == "m1")
    assert (m1["reason"], m1["usage"]) == ("reused", {"tokens": 0})
    assert run["usage"]["tokens"] == 15
    assert schema_problems(run["events"]) == []
    record = NodeRecord.objects.get(run_id=run["id"], node_id="m1")
    assert (record.status, record.data["reused_from"]) == ("reused", None)

    # Cleared, the node is called again.
    assert http.client.delete(pin_url(design_id, "m1")).status_code == 204
    again = run_to_end(http, design_id, input="hello")
    assert again["output"] == "answer 3: answer 2: Say hello" and model.calls == 3


def test_versions_and_evaluations_never_use_pins(stack: Stack, api: Api, alice: Any,
                                                 acme: Any, model: Upstream) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, two_models())
    assert http.client.put(pin_url(design_id, "m1"),
                           json={"port": "out", "value": "pinned one"}).status_code == 200
    published = http.client.post(f"/api/v1/agent-designs/{design_id}/publish",
                                 json={"revision": 1})
    assert published.status_code == 201, published.text
    started = http.client.post(f"/api/v1/agent-versions/{published.json()['id']}/runs",
                               json={"input": "hi"})
    assert started.status_code == 201, started.text
    run = wait_stored(http, design_id, started.json()["id"])
    assert run["output"] == "answer 2: answer 1: Say hi" and model.calls == 2

    cases = [{"id": "c1", "name": "c1", "input": "hi", "expected": {"calls": ["m1", "m2"]}}]
    saved = http.client.put(f"/api/v1/agent-designs/{design_id}/fixtures",
                            json={"revision": 0, "cases": cases})
    assert saved.status_code == 200, saved.text
    evaluated = http.client.post(f"/api/v1/agent-designs/{design_id}/evaluations", json={})
    assert evaluated.status_code == 201, evaluated.text
    url = f"/api/v1/agent-evaluations/{evaluated.json()['id']}"
    done = wait_for(lambda: (e := http.client.get(url).json())["status"] not in (
        "queued", "running") and e, timeout=90)
    [case] = done["cases"]
    assert case["output"] == "answer 4: answer 3: Say hi", done
    assert model.calls == 4
