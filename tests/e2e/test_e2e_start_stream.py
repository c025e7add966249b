"""Start and follow in one request: `POST …/runs` with `Accept: text/event-stream`
answers 201 with the run's stream (the run first, then its events to the end); the
start's checks and errors are those of the JSON start."""

from typing import Any

import pytest

from designs.starter_templates import TEMPLATES
from tests.conftest import Api
from tests.e2e.conftest import Http
from tests.e2e.helpers import wait_stored
from tests.sse_frames import frames as sse_frames
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)

SSE = {"Accept": "text/event-stream"}


def test_it_starts_and_streams_the_run_to_its_end(stack: Stack, api: Api, alice: Any,
                                                   acme: Any) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, TEMPLATES[2]["graph"])
    url = f"/api/v1/agent-designs/{design_id}/runs"
    with http.client.stream("POST", url, json={"input": "hello, a bug"}, headers=SSE) as answer:
        assert answer.status_code == 201, answer.read()
        assert answer.headers["content-type"].startswith("text/event-stream")
        frames = list(sse_frames(answer.iter_lines()))
    kind, head, has_id = frames[0]
    run_id = head["id"]
    assert (kind, has_id, head["status"]) == ("run", False, "queued")
    assert head["url"] == f"{url}/{run_id}" == answer.headers["location"]
    assert head["events_url"] == f"{url}/{run_id}/events"
    assert answer.headers["x-run-id"] == run_id
    events = [data for kind, data, _ in frames[1:] if kind != "delta"]
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert events[-1]["type"] == "run.completed"
    # The same events as the stored log, and as the events route serves them.
    assert wait_stored(http, design_id, run_id)["events"] == events
    assert [d for k, d in http.sse(design_id, run_id) if k != "delta"] == events


def test_its_errors_are_the_json_starts(stack: Stack, api: Api, alice: Any, bob: Any,
                                        acme: Any) -> None:
    design_id = Http(stack, api.token_for(alice)).create_design(acme.pk, TEMPLATES[2]["graph"])
    viewer = Http(stack, api.token_for(bob))
    url = f"/api/v1/agent-designs/{design_id}/runs"
    refused = viewer.client.post(url, json={"input": "hi"}, headers=SSE)
    as_json = viewer.client.post(url, json={"input": "hi"})
    assert refused.headers["content-type"].startswith("application/json")
    assert (refused.status_code, refused.json()) == (as_json.status_code, as_json.json())
    assert refused.status_code == 403
    invalid = Http(stack, api.token_for(alice)).client.post(url, json={"input": 3}, headers=SSE)
    assert invalid.status_code == 400
    assert invalid.json()["error"]["code"] == "invalid_request"
