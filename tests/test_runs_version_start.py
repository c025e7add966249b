"""POST /agent-versions/{id}/runs: a published version runs like a design, recording version_id."""

from typing import Any

import pytest
import redis

from kionga.models import AuditEvent
from kionga.resource_models import ModelEndpoint
from runs.models import Run
from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.runs_helpers import queued_tasks, start_url
from tests.versions_helpers import linear, publish, published

pytestmark = pytest.mark.django_db(transaction=True)


def url(version: Any) -> str:
    return f"/api/v1/agent-versions/{version.pk}/runs"


def test_it_runs_the_published_graph(api: Api, alice: Any, carol: Any, acme: Any,
                                     runner_configured: Any, rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    version = publish(alice, design)
    response = api.client_for(carol).post(url(version), {"input": "hi"}, format="json")
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["version_id"] == str(version.pk) and data["design_id"] == str(design.pk)
    assert data["revision"] == 1 and data["content_sha256"] == version.content_sha256
    [(payload, _)] = queued_tasks(rds)
    assert payload["graph"] == version.artifact["graph"] and payload["run_id"] == data["id"]
    # Its events and SSE are the design's run routes.
    read = api.client_for(carol).get(f"{start_url(design)}/{data['id']}")
    assert read.status_code == 200 and read.json()["version_id"] == str(version.pk)
    audit = AuditEvent.objects.get(action="run.started")
    assert audit.details["version_id"] == str(version.pk)


def test_it_runs_tool_nodes_without_allow_side_effects(api: Api, alice: Any, acme: Any,
                                                       runner_configured: Any,
                                                       rds: redis.Redis) -> None:
    tool = published(alice, acme, linear({"id": "t", "kind": "tool",
                                          "config": {"tool": "word_count"}}))
    data = api.client_for(alice).post(url(tool), {"input": "a b"}, format="json").json()
    assert data["allow_side_effects"] is True
    [(payload, _)] = queued_tasks(rds)
    assert payload["allow_side_effects"] is True
    # The design's own playground run still needs it.
    design_run = api.client_for(alice).post(start_url(tool.design), {"input": "a"},
                                            format="json").json()
    assert design_run["allow_side_effects"] is False


def test_it_lets_viewers_read_but_not_run(api: Api, alice: Any, bob: Any, mallory: Any,
                                          acme: Any, runner_configured: Any,
                                          rds: redis.Redis) -> None:
    version = publish(alice, make_design(alice, acme))
    api.assert_error(api.client_for(bob).post(url(version), {"input": "x"}, format="json"),
                     403, "forbidden")
    assert api.client_for(bob).get(f"/api/v1/agent-versions/{version.pk}").status_code == 200
    api.assert_error(api.client_for(mallory).post(url(version), {"input": "x"},
                                                  format="json"), 404, "not_found")
    assert Run.objects.count() == 0


def test_it_replays_an_idempotency_key_per_version(api: Api, alice: Any, acme: Any,
                                                   runner_configured: Any,
                                                   rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    version = publish(alice, design)
    client = api.client_for(alice)
    first = client.post(url(version), {"input": "x"}, format="json",
                   HTTP_IDEMPOTENCY_KEY="k-1")
    again = client.post(url(version), {"input": "x"}, format="json",
                   HTTP_IDEMPOTENCY_KEY="k-1")
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["id"] == again.json()["id"]
    # The same key and body on the design's own runs is another request.
    api.assert_error(client.post(start_url(design), {"input": "x"}, format="json",
                   HTTP_IDEMPOTENCY_KEY="k-1"),
                     422, "idempotency_mismatch")


def test_it_refuses_a_revision_and_bad_bodies(api: Api, alice: Any, acme: Any,
                                              runner_configured: Any,
                                              rds: redis.Redis) -> None:
    version = publish(alice, make_design(alice, acme))
    client = api.client_for(alice)
    api.assert_error(client.post(url(version), {"revision": 1}, format="json"), 400,
                     "invalid_request")
    api.assert_error(client.post(url(version), {"input": 5}, format="json"), 400,
                     "invalid_request")
    api.assert_error(client.post("/api/v1/agent-versions/nope/runs", {}, format="json"), 404,
                     "not_found")


def test_it_rechecks_the_versions_resources_at_every_start(api: Api, alice: Any, acme: Any,
                                                           runner_configured: Any,
                                                           rds: redis.Redis) -> None:
    model = ModelEndpoint.objects.create(project=acme, key="gpt", base_url="http://m.test/v1",
                                         model_name="m")
    version = published(alice, acme, linear({"id": "m", "kind": "model",
                                             "config": {"model": "gpt"}}))
    client = api.client_for(alice)
    assert client.post(url(version), {"input": "x"}, format="json").status_code == 201
    model.delete()
    error = api.assert_error(client.post(url(version), {"input": "x"}, format="json"), 422,
                             "validation_failed")
    assert [i["code"] for i in error["details"]["issues"]] == ["unknown_resource"]
    assert Run.objects.count() == 1
