"""A run carries every version it reaches (with hashes), and their resources join its scope;
a nested version's resource that is gone refuses the run at start."""

from typing import Any

import pytest
import redis

from contracts.hashing import content_sha256
from designs.actions import do_create_design
from kionga.resource_models import ModelEndpoint
from runs.models import Run
from tests.conftest import Api
from tests.runs_helpers import queued_tasks, start_url
from tests.versions_helpers import flow_graph, linear, published

pytestmark = pytest.mark.django_db(transaction=True)


def _nested(alice: Any, acme: Any) -> tuple[Any, Any, Any]:
    """leaf (uses model gpt) <- middle (subflow) ; a design mapping over middle."""
    ModelEndpoint.objects.create(project=acme, key="gpt", base_url="http://m.test/v1",
                                 model_name="m")
    leaf = published(alice, acme, linear({"id": "m", "kind": "model",
                                          "config": {"model": "gpt"}}), "Leaf")
    middle = published(alice, acme, flow_graph("subflow", str(leaf.pk)), "Middle")
    design = do_create_design(alice, acme, "Top", "", flow_graph("map", str(middle.pk)))
    return leaf, middle, design


def test_it_sends_every_reached_version_with_its_hash(api: Api, alice: Any, acme: Any,
                                                      runner_configured: Any,
                                                      rds: redis.Redis) -> None:
    leaf, middle, design = _nested(alice, acme)
    data = api.client_for(alice).post(start_url(design), {"input": "[1]"}, format="json").json()
    [(payload, _)] = queued_tasks(rds)
    assert set(payload["subflows"]) == {str(leaf.pk), str(middle.pk)}
    for version in (leaf, middle):
        graph = payload["subflows"][str(version.pk)]
        assert payload["subflow_hashes"][str(version.pk)] == version.content_sha256 \
            == content_sha256(graph)
    run = Run.objects.get(pk=data["id"])
    # The leaf's model is in scope although only the leaf (two levels down) names it.
    assert run.resources == {"model": ["gpt"],
                             "version": sorted([str(leaf.pk), str(middle.pk)])}


def test_it_refuses_the_run_when_a_nested_resource_is_gone(api: Api, alice: Any, acme: Any,
                                                           runner_configured: Any,
                                                           rds: redis.Redis) -> None:
    leaf, _middle, design = _nested(alice, acme)
    client = api.client_for(alice)
    assert client.post(start_url(design), {"input": "[1]"}, format="json").status_code == 201
    ModelEndpoint.objects.filter(project=acme, key="gpt").delete()
    error = api.assert_error(client.post(start_url(design), {"input": "[1]"}, format="json"),
                             422, "validation_failed")
    [issue] = error["details"]["issues"]
    assert issue["code"] == "unknown_resource" and str(leaf.pk) in issue["message"]
    assert Run.objects.count() == 1 and len(queued_tasks(rds)) == 1
