"""A run start checks the resources its graph names in its one read (runs.start_read
asks designs.resource_check's SQL about the references of the revision's stored
validation): a resource deleted after the revision was saved, or another project's
key, answers 422 with the missing-resource issue, and no run, slot or task exists."""

from typing import Any

import pytest
import redis
from django.db import connection
from django.test.utils import CaptureQueriesContext

from designs.models import DesignRevision
from designs.resource_check import ProjectResources
from kionga.models import Project
from kionga.resource_models import KnowledgeBase, ModelEndpoint
from runner import protocol
from runs.models import Run
from tests.conftest import Api
from tests.designs_helpers import assistant_graph, make_design
from tests.runs_helpers import queued_tasks, start_url

pytestmark = pytest.mark.django_db(transaction=True)


def _design_on(api: Api, owner: Any, project: Project, model_key: str) -> Any:
    graph = assistant_graph()
    graph["nodes"][2]["config"]["model"] = model_key
    design = make_design(owner, project)
    saved = api.client_for(owner).put(f"/api/v1/agent-designs/{design.pk}",
                                      {"revision": 1, "graph": graph}, format="json")
    assert saved.status_code == 200, saved.content
    return design


def _model(project: Project, key: str) -> ModelEndpoint:
    return ModelEndpoint.objects.create(project=project, key=key, base_url="http://m.test/v1",
                                        model_name="m")


def _refused(api: Api, response: Any, rds: redis.Redis) -> list[dict[str, Any]]:
    body = api.assert_error(response, 422, "validation_failed")
    assert Run.objects.count() == 0 and queued_tasks(rds) == []
    assert rds.zcard(protocol.SLOTS_KEY) == 0
    return [i for i in body["details"]["issues"] if i["code"] == "unknown_resource"]


def test_it_refuses_a_start_after_the_model_resource_is_deleted(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis) -> None:
    model = _model(acme, "gpt")
    design = _design_on(api, alice, acme, "gpt")
    client = api.client_for(alice)
    assert client.post(start_url(design), {"input": "x"}, format="json").status_code == 201
    Run.objects.all().delete()
    rds.delete(protocol.SLOTS_KEY, protocol.LEASES_KEY, protocol.QUEUE)
    model.delete()
    missing = _refused(api, client.post(start_url(design), {"input": "x"}, format="json"), rds)
    assert [(i["path"], i["node_id"]) for i in missing] == [("nodes.2.config.model", "model")]


def test_another_projects_resource_key_counts_as_missing(
        api: Api, alice: Any, acme: Any, evil: Any, runner_configured: Any,
        rds: redis.Redis) -> None:
    _model(evil, "gpt")
    design = _design_on(api, alice, acme, "gpt")
    missing = _refused(api, api.client_for(alice).post(start_url(design), {"input": "x"},
                                                       format="json"), rds)
    assert [i["path"] for i in missing] == ["nodes.2.config.model"]
    # The validator's own check (validate endpoints, publish) answers the same.
    assert ProjectResources(acme).existing_ids("model", {"gpt"}) == set()
    assert ProjectResources(evil).existing_ids("model", {"gpt"}) == {"gpt"}


def test_a_start_asks_nothing_of_its_own_about_resources(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        prepared_reads: list[tuple[str, Any]]) -> None:
    _model(acme, "gpt")
    design = _design_on(api, alice, acme, "gpt")
    client = api.client_for(alice)
    prepared_reads.clear()  # the design's creation read it too
    with CaptureQueriesContext(connection) as queries:
        response = client.post(start_url(design), {"input": "x"}, format="json")
    assert response.status_code == 201, response.content
    tables = (ModelEndpoint._meta.db_table, KnowledgeBase._meta.db_table)
    assert not [q for q in queries.captured_queries if any(t in q["sql"] for t in tables)]
    # The one start read asks about the model (its SQL names the table), nothing else does.
    assert len([q for q, _ in prepared_reads if ModelEndpoint._meta.db_table in q]) == 1


def test_a_stale_stored_validation_still_checks_resources(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis) -> None:
    model = _model(acme, "gpt")
    design = _design_on(api, alice, acme, "gpt")
    model.delete()
    # A new validator's fingerprint: the stored references are not trusted, asked anew.
    DesignRevision.objects.filter(design=design).update(validation={"fingerprint": "old"})
    missing = _refused(api, api.client_for(alice).post(start_url(design), {"input": "x"},
                                                       format="json"), rds)
    assert [i["path"] for i in missing] == ["nodes.2.config.model"]
