"""Published versions through the real stack: publish over HTTP, then subflow, map and loop
run in the Celery runner with their events on SSE and in PostgreSQL; a tampered nested
artifact is refused before any node runs; a version's tool node needs no allow_side_effects."""

from __future__ import annotations

import json
from typing import Any

import pytest

from designs.models import Version
from tests.conftest import Api
from tests.e2e.conftest import Http
from tests.e2e.helpers import schema_problems, wait_stored
from tests.stack import Stack
from tests.versions_helpers import linear

pytestmark = pytest.mark.django_db(transaction=True)


def publish(http: Http, project_id: int, graph: dict[str, Any], name: str) -> str:
    design_id = http.create_design(project_id, graph, name)
    response = http.client.post(f"/api/v1/agent-designs/{design_id}/publish",
                                json={"revision": 1, "notes": name})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def with_error_branch(kind: str, version_id: str, **config: str) -> dict[str, Any]:
    """input -> flow node -> output, its error port through a prompt to the output, and
    (loop) its exhausted port through another prompt."""
    graph = linear({"id": "flow", "kind": kind, "config": {"subflow": version_id, **config}})
    graph["nodes"] += [
        {"id": "failed", "kind": "prompt", "config": {"template": "failed: {input}"}},
        {"id": "gave-up", "kind": "prompt", "config": {"template": "gave up: {input}"}}]
    graph["edges"] += [
        {"from": "flow", "to": "failed", "from_port": "error", "to_port": "in"},
        {"from": "failed", "to": "output", "from_port": "out", "to_port": "in"}]
    if kind == "loop":
        graph["edges"] += [
            {"from": "flow", "to": "gave-up", "from_port": "exhausted", "to_port": "in"},
            {"from": "gave-up", "to": "output", "from_port": "out", "to_port": "in"}]
    else:
        graph["nodes"].pop()
    return graph


def run_design(http: Http, project_id: int, graph: dict[str, Any], text: str
               ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    design_id = http.create_design(project_id, graph, "Top")
    started = http.start(design_id, input=text)
    assert started.status_code == 201, started.text
    run_id = started.json()["id"]
    streamed = [data for kind, data in http.sse(design_id, run_id) if kind != "delta"]
    run = wait_stored(http, design_id, run_id)
    assert run["events"] == streamed and schema_problems(run["events"]) == []
    return streamed, run


def completed(events: list[dict[str, Any]], node_id: str) -> dict[str, Any]:
    [event] = [e for e in events if e["type"] == "node.completed" and e["node_id"] == node_id]
    return event


def test_it_runs_a_subflow(stack: Stack, api: Api, alice: Any, acme: Any) -> None:
    http = Http(stack, api.token_for(alice))
    leaf = publish(http, acme.pk, linear({"id": "p", "kind": "prompt",
                                          "config": {"template": "<{input}>"}}), "Leaf")
    events, run = run_design(http, acme.pk, with_error_branch("subflow", leaf), "hi")
    assert run["status"] == "completed" and run["output"] == "<hi>"
    assert completed(events, "flow")["port"] == "out"


def test_it_maps_more_items_than_its_concurrency(stack: Stack, api: Api, alice: Any,
                                                 acme: Any) -> None:
    http = Http(stack, api.token_for(alice))
    leaf = publish(http, acme.pk, linear({"id": "x", "kind": "extract",
                                          "config": {"path": "name"}}), "Names")
    graph = with_error_branch("map", leaf, concurrency="2")
    items = '[{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}, {"name": "e"}]'
    events, run = run_design(http, acme.pk, graph, items)
    assert run["status"] == "completed", run
    assert completed(events, "flow")["iterations"] == 5
    # Each item's subflow answers its output text: the extracted JSON string, as JSON.
    assert json.loads(run["output"]) == ['"a"', '"b"', '"c"', '"d"', '"e"']
    # One item without a name fails its subflow: the map's error port takes over.
    events, run = run_design(http, acme.pk, graph, '[{"name": "a"}, {"nope": 1}, {"name": "c"}]')
    assert run["status"] == "completed", run
    assert run["output"].startswith("failed: ") and "subflow" in run["output"]
    assert [e["node_id"] for e in events if e["type"] == "node.failed"] == ["flow"]


def test_it_loops_until_met_or_exhausted(stack: Stack, api: Api, alice: Any,
                                         acme: Any) -> None:
    http = Http(stack, api.token_for(alice))
    leaf = publish(http, acme.pk, linear({"id": "p", "kind": "prompt",
                                          "config": {"template": "{input}+"}}), "Grow")
    met = with_error_branch("loop", leaf, until="longer_than:3", max_iterations="5")
    events, run = run_design(http, acme.pk, met, "a")
    assert run["output"] == "a+++"
    assert (completed(events, "flow")["port"], completed(events, "flow")["iterations"]) == \
        ("out", 3)
    exhausted = with_error_branch("loop", leaf, until="contains:zzz", max_iterations="2")
    events, run = run_design(http, acme.pk, exhausted, "a")
    assert run["output"] == "gave up: a++"
    assert (completed(events, "flow")["port"], completed(events, "flow")["iterations"]) == \
        ("exhausted", 2)


def test_it_refuses_a_tampered_nested_artifact(stack: Stack, api: Api, alice: Any,
                                               acme: Any) -> None:
    http = Http(stack, api.token_for(alice))
    leaf = publish(http, acme.pk, linear({"id": "p", "kind": "prompt",
                                          "config": {"template": "<{input}>"}}), "Leaf")
    # Someone with database access changes the leaf's behaviour and keeps its hash.
    version = Version.objects.get(pk=leaf)
    artifact = version.artifact
    artifact["graph"]["nodes"][1]["config"]["template"] = "leaked: {input}"
    Version.objects.filter(pk=leaf).update(artifact=artifact)
    events, run = run_design(http, acme.pk, with_error_branch("subflow", leaf), "hi")
    assert [e["type"] for e in events] == ["run.started", "run.failed"]
    assert events[-1]["reason"] == "invalid_artifact" and leaf in events[-1]["error"]["message"]
    assert run["status"] == "failed"


def test_it_runs_a_versions_tool_without_allow_side_effects(stack: Stack, api: Api,
                                                            alice: Any, acme: Any) -> None:
    http = Http(stack, api.token_for(alice))
    graph = linear({"id": "t", "kind": "tool", "config": {"tool": "word_count"}})
    version = publish(http, acme.pk, graph, "Counter")
    started = http.client.post(f"/api/v1/agent-versions/{version}/runs",
                               json={"input": "three little words"})
    assert started.status_code == 201, started.text
    data = started.json()
    run = wait_stored(http, data["design_id"], data["id"])
    assert run["status"] == "completed", run
    assert run["version_id"] == version and "3" in run["output"]
    # The same graph as a playground run of its design needs the flag.
    playground = http.start(data["design_id"], input="three little words")
    design_run = wait_stored(http, data["design_id"], playground.json()["id"])
    assert design_run["status"] == "failed"
    assert design_run["error"]["code"] == "side_effects_not_allowed"
