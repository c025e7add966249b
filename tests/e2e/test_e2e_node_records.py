"""Node records and re-runs through the real processes, against a loopback
OpenAI-compatible model that counts its calls: input → prompt → model → model → output."""

from __future__ import annotations

import json
from typing import Any

import pytest

from runs.models import NodeRecord, Run
from tests.conftest import Api
from tests.e2e.cli_kit import Kionga
from tests.e2e.conftest import Http
from tests.e2e.helpers import schema_problems, wait_for, wait_stored
from tests.e2e.replay_kit import CANARY, Upstream, model, run_to_end, two_models
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["model"]  # the fixture, used by name


def nodes_url(design_id: str, run_id: str) -> str:
    return f"/api/v1/agent-designs/{design_id}/runs/{run_id}/nodes"


def test_a_rerun_from_the_second_model_calls_it_alone(stack: Stack, api: Api, alice: Any,
                                                      bob: Any, mallory: Any, acme: Any,
                                                      model: Upstream) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, two_models())
    first = run_to_end(http, design_id, input="hello")
    assert first["status"] == "completed", first
    assert first["output"] == "answer 2: answer 1: Say hello" and model.calls == 2

    listed = http.client.get(nodes_url(design_id, first["id"]))
    assert listed.status_code == 200, listed.text
    records = {n["node_id"]: n for n in listed.json()["nodes"]}
    assert set(records) == {"input", "p", "m1", "m2", "output"}
    assert records["m1"]["usage"] == {"tokens": 15, "cost": 0.02}
    assert records["m2"]["preview"] == "answer 2: answer 1: Say hello"
    one = http.client.get(nodes_url(design_id, first["id"]) + "/m1").json()
    assert one["attempts"][0]["inputs"][0]["value"] == "Say hello"
    assert one["attempts"][0]["output"]["value"] == "answer 1: Say hello"

    again = run_to_end(http, design_id, from_run=first["id"], from_node="m2")
    assert again["status"] == "completed", again
    assert model.calls == 3, "exactly one upstream call: the second model's"
    assert again["output"] == "answer 3: answer 1: Say hello"  # differs downstream only
    assert (again["from_run"], again["from_node"]) == (first["id"], "m2")
    reused = [e for e in again["events"] if e["type"] == "node.completed"
              and e.get("reason") == "reused"]
    assert [e["node_id"] for e in reused] == ["input", "p", "m1"]
    assert all(e["usage"] == {"tokens": 0} for e in reused)
    assert again["usage"]["tokens"] == 15
    assert schema_problems(again["events"]) == []
    rerecorded = {r.node_id: r.status for r in NodeRecord.objects.filter(run_id=again["id"])}
    assert rerecorded == {"input": "reused", "p": "reused", "m1": "reused",
                          "m2": "completed", "output": "completed"}

    # Same roles as the run: a viewer reads, only an editor re-runs; another project's
    # person gets 404 on every new route.
    viewer = Http(stack, api.token_for(bob))
    assert viewer.client.get(nodes_url(design_id, first["id"])).status_code == 200
    assert viewer.start(design_id, from_run=first["id"], from_node="m2").status_code == 403
    other = Http(stack, api.token_for(mallory))
    for url in (nodes_url(design_id, first["id"]), nodes_url(design_id, first["id"]) + "/m1"):
        answer = other.client.get(url)
        assert answer.status_code == 404 and answer.json()["error"]["code"] == "not_found"
    assert other.start(design_id, from_run=first["id"], from_node="m2").status_code == 404


def test_a_failed_run_resumes_from_its_failed_node_without_paying_again(
        stack: Stack, api: Api, alice: Any, acme: Any, model: Upstream) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, two_models())
    model.fail_second = True  # the first model answers, the second's server is down
    failed = run_to_end(http, design_id, input="hello")
    assert failed["status"] == "failed" and failed["error"] is not None, failed
    last = [e for e in failed["events"] if e["type"] == "node.failed"][-1]
    assert last["node_id"] == "m2"
    paid = model.calls
    assert paid == 1

    model.fail_second = False
    resumed = run_to_end(http, design_id, from_run=failed["id"], from_node="m2")
    assert resumed["status"] == "completed", resumed
    assert model.calls == paid + 1
    assert resumed["output"] == "answer 2: answer 1: Say hello"
    m1 = next(e for e in resumed["events"]
              if e["type"] == "node.completed" and e["node_id"] == "m1")
    assert m1["usage"] == {"tokens": 0} and m1["reason"] == "reused"
    assert resumed["usage"]["tokens"] == 15  # the second model's only


def test_a_rerun_is_refused_when_the_graph_changed_upstream(
        stack: Stack, api: Api, alice: Any, acme: Any, model: Upstream) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, two_models())
    first = run_to_end(http, design_id, input="hello")
    saved = http.client.put(f"/api/v1/agent-designs/{design_id}",
                            json={"revision": 1, "graph": two_models("Tell me {input}")})
    assert saved.status_code == 200, saved.text
    calls = model.calls

    refused = http.start(design_id, from_run=first["id"], from_node="m2")
    assert refused.status_code == 422, refused.text
    issues = refused.json()["error"]["details"]["issues"]
    assert {(i["code"], i["node_id"]) for i in issues} == {
        ("rerun_upstream_changed", "p"), ("rerun_upstream_changed", "m1")}
    assert all("p changed" in i["message"] for i in issues)
    # From the changed node itself, the re-run is fine.
    again = run_to_end(http, design_id, from_run=first["id"], from_node="p")
    assert again["status"] == "completed"
    assert again["output"] == f"answer {calls + 2}: answer {calls + 1}: Tell me hello"
    assert Run.objects.filter(design_id=design_id).count() == 2


def test_no_record_holds_the_model_key(stack: Stack, api: Api, alice: Any, acme: Any,
                                       model: Upstream) -> None:
    """The canary: a hostile model server echoes the key it is sent."""
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, two_models("leak {input}"))
    run = run_to_end(http, design_id, input="please")
    assert run["status"] == "completed", run
    assert "[redacted]" in run["output"]
    stored = [r.data for r in NodeRecord.objects.filter(run_id=run["id"])]
    assert len(stored) == 5 and CANARY not in json.dumps(stored)
    answers = [http.client.get(nodes_url(design_id, run["id"])).text] + [
        http.client.get(nodes_url(design_id, run["id"]) + f"/{n}").text for n in ("m1", "m2")]
    assert all(CANARY not in text for text in answers)


def test_kionga_run_from_a_node(stack: Stack, api: Api, alice: Any, acme: Any,
                                model: Upstream) -> None:
    token = api.token_for(alice)
    http, kionga = Http(stack, token), Kionga(stack, token)
    design_id = http.create_design(acme.pk, two_models())
    first = kionga("run", design_id, "--input", "hello")["data"]
    assert first["output"] == "answer 2: answer 1: Say hello"
    again = kionga("run", design_id[:8], "--from-run", first["run_id"][:8],
                   "--from-node", "m2")["data"]
    assert again["output"] == "answer 3: answer 1: Say hello" and model.calls == 3
    assert again["from_run"] == first["run_id"]
    refused = kionga("run", design_id, "--from-run", first["run_id"], code=2)
    assert refused["error"]["code"] == "USAGE"


def test_a_version_run_keeps_records_too(stack: Stack, api: Api, alice: Any, acme: Any,
                                         model: Upstream) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, two_models())
    published = http.client.post(f"/api/v1/agent-designs/{design_id}/publish",
                                 json={"revision": 1})
    assert published.status_code == 201, published.text
    started = http.client.post(f"/api/v1/agent-versions/{published.json()['id']}/runs",
                               json={"input": "hi"})
    assert started.status_code == 201, started.text
    run = wait_stored(http, design_id, started.json()["id"])
    assert run["status"] == "completed" and run["version_id"] == published.json()["id"]
    listed = http.client.get(nodes_url(design_id, run["id"])).json()["nodes"]
    assert sorted(n["node_id"] for n in listed) == ["input", "m1", "m2", "output", "p"]


def test_an_evaluation_cases_run_keeps_records_too(stack: Stack, api: Api, alice: Any,
                                                   acme: Any, model: Upstream) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, two_models())
    cases = [{"id": "c1", "name": "c1", "input": "hi", "expected": {"calls": ["m1", "m2"]}}]
    saved = http.client.put(f"/api/v1/agent-designs/{design_id}/fixtures",
                            json={"revision": 0, "cases": cases})
    assert saved.status_code == 200, saved.text
    started = http.client.post(f"/api/v1/agent-designs/{design_id}/evaluations", json={})
    assert started.status_code == 201, started.text
    url = f"/api/v1/agent-evaluations/{started.json()['id']}"
    done = wait_for(lambda: (e := http.client.get(url).json())["status"] not in (
        "queued", "running") and e, timeout=90)
    [case] = done["cases"]
    assert case["run_id"], done
    records = wait_for(lambda: http.client.get(nodes_url(design_id, case["run_id"])).json()[
        "nodes"])
    assert sorted(n["node_id"] for n in records) == ["input", "m1", "m2", "output", "p"]
