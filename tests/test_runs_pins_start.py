"""Pins reach design-time runs only: a run of a design's revision sends its pins that fit
the graph as the task's `reuse` (from_run null); a re-run sends them with its recorded
outcomes; a version's run and an evaluation's case run never take them
(docs/decisions/pinned-outputs-live-with-the-design.md)."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from designs.models import Design, Pin
from evaluations import progress
from evaluations.models import Evaluation
from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.evaluations_helpers import (
    calls_only,
    evaluations_url,
    gateway_queue,
    make_evaluated,
)
from tests.runs_helpers import queued_tasks, start_url
from tests.test_runs_rerun_start import recorded_run
from tests.versions_helpers import publish

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["gateway_queue"]

PINNED = {"model": {"port": "out", "value": "pinned answer", "from_run": None}}


def pin(design: Design, node: str = "model", port: str = "out",
        value: Any = "pinned answer") -> None:
    Pin.objects.create(design=design, node_id=node, port=port, value=value)


def test_a_design_run_repeats_its_pins(api: Api, alice: Any, acme: Any,
                                       runner_configured: Any, rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    pin(design)
    pin(design, "ghost")  # no such node in the graph: left out
    pin(design, "prompt", value={"not": "text"})  # no longer fits its port: left out
    answer = api.client_for(alice).post(start_url(design), {"input": "hi"}, format="json")
    assert answer.status_code == 201, answer.content
    [(payload, _)] = queued_tasks(rds)
    assert payload["reuse"] == PINNED


def test_a_version_run_takes_no_pins(api: Api, alice: Any, acme: Any,
                                     runner_configured: Any, rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    version = publish(alice, design)
    pin(design)
    answer = api.client_for(alice).post(f"/api/v1/agent-versions/{version.pk}/runs",
                                        {"input": "hi"}, format="json")
    assert answer.status_code == 201, answer.content
    [(payload, _)] = queued_tasks(rds)
    assert "reuse" not in payload


def test_an_evaluations_runs_take_no_pins(api: Api, alice: Any, acme: Any,
                                          runner_configured: Any, rds: redis.Redis,
                                          gateway_queue: redis.Redis) -> None:
    design = make_evaluated(alice, acme, [calls_only("c1", "one")])
    pin(design, "answer", value="pinned answer")
    started = api.client_for(alice).post(evaluations_url(design), {}, format="json")
    assert started.status_code == 201, started.content
    progress.advance(started.json()["id"])
    assert Evaluation.objects.get(pk=started.json()["id"]).cases.filter(
        run__isnull=False).count() == 1
    [(payload, _)] = queued_tasks(rds)
    assert payload["input"] == "one" and "reuse" not in payload
    # The same design's own run takes the pin.
    api.client_for(alice).post(start_url(design), {"input": "two"}, format="json")
    ran = [p for p, _ in queued_tasks(rds) if p["input"] == "two"]
    assert ran[0]["reuse"] == {"answer": {"port": "out", "value": "pinned answer",
                                          "from_run": None}}


def test_a_rerun_sends_its_records_and_the_pins_which_win(api: Api, alice: Any, acme: Any,
                                                          runner_configured: Any,
                                                          rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    source = recorded_run(api, alice, design, rds)
    pin(design, "prompt", value="pinned prompt")
    answer = api.client_for(alice).post(start_url(design), {
        "from_run": str(source.pk), "from_node": "model"}, format="json")
    assert answer.status_code == 201, answer.content
    [(payload, _)] = queued_tasks(rds)
    assert payload["reuse"] == {
        "input": {"port": "out", "value": "input said", "from_run": str(source.pk)},
        "prompt": {"port": "out", "value": "pinned prompt", "from_run": None}}
