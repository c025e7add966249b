"""A run task's hard time limit (Celery kills a pool process past it) leaves room for
the longest its approvals can keep it waiting: the run's own clock stands still while
it waits for a person, so the worker's default limit alone would kill such a run."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
import redis
from celery.worker.request import Request
from kombu import Message

from designs.actions import do_create_design
from runner import protocol
from runner.celery_app import app as runner_app
from runner.components.approval import GRACE_SECONDS
from runner.task_limits import BASE_TIME_LIMIT, POLL_ALLOWANCE, person_waits
from tests.approvals_helpers import gated_graph
from tests.conftest import Api
from tests.designs_helpers import assistant_graph, make_design
from tests.runs_helpers import start_url

pytestmark = pytest.mark.django_db(transaction=True)


def queued_time_limit(rds: redis.Redis) -> Any:
    """The hard limit the runner's pool applies to the one queued task."""
    [raw] = rds.lrange(protocol.QUEUE, 0, -1)  # type: ignore[misc]
    sent = json.loads(raw)
    # As kombu's Redis transport hands it to the worker: the body decoded from base64.
    message = Message(body=base64.b64decode(sent["body"]), content_type=sent["content-type"],
                      content_encoding=sent["content-encoding"], headers=sent["headers"],
                      properties=sent["properties"], delivery_info={})
    return Request(message, app=runner_app).time_limits


def test_an_approval_waits_longer_than_the_default_limit_allows(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis) -> None:
    design = do_create_design(alice, acme, "Gated", "", gated_graph("290"))
    started = api.client_for(alice).post(start_url(design), {"input": "x"}, format="json")
    assert started.status_code == 201, started.content
    assert queued_time_limit(rds) == [None, BASE_TIME_LIMIT + 290 + GRACE_SECONDS
                                      + POLL_ALLOWANCE]


def test_a_graph_without_approvals_keeps_the_base_limit(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis) -> None:
    started = api.client_for(alice).post(start_url(make_design(alice, acme)), {"input": "x"},
                                         format="json")
    assert started.status_code == 201, started.content
    assert queued_time_limit(rds) == [None, BASE_TIME_LIMIT]


def test_it_counts_approvals_in_the_versions_a_map_runs_each_time() -> None:
    asks = {"nodes": [{"id": "a", "kind": "approval", "config": {}}]}  # default 120 s
    caller = {"nodes": [{"id": "m", "kind": "map",
                         "config": {"subflow": "v-ask", "max_items": "3"}},
                        {"id": "s", "kind": "subflow", "config": {"subflow": "v-ask"}},
                        {"id": "p", "kind": "prompt", "config": {"template": "x"}}]}
    one = 120 + GRACE_SECONDS + POLL_ALLOWANCE
    assert person_waits(caller, {"v-ask": asks}) == 3 * one + one
    assert person_waits(assistant_graph(), {}) == 0
