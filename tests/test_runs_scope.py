"""A started run records the resources its graph names: its credential's whole scope."""

from typing import Any

import pytest
import redis

from kionga.resource_models import ModelEndpoint
from runs.models import Run
from tests.conftest import Api
from tests.designs_helpers import assistant_graph, make_design
from tests.runs_helpers import start_url

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_stores_the_graphs_resources_on_the_run(api: Api, alice: Any, acme: Any,
                                                   runner_configured: Any,
                                                   rds: redis.Redis) -> None:
    ModelEndpoint.objects.create(project=acme, key="gpt", base_url="http://m.test/v1",
                                 model_name="m")
    ModelEndpoint.objects.create(project=acme, key="unused", base_url="http://m.test/v1",
                                 model_name="m")
    design = make_design(alice, acme)
    client = api.client_for(alice)
    platform = client.post(start_url(design), {"input": "x"}, format="json").json()
    assert Run.objects.get(pk=platform["id"]).resources == {}  # `llm` is no resource
    graph = assistant_graph()
    graph["nodes"][2]["config"]["model"] = "gpt"
    client.put(f"/api/v1/agent-designs/{design.pk}", {"revision": 1, "graph": graph},
               format="json")
    own = client.post(start_url(design), {"input": "x"}, format="json").json()
    assert Run.objects.get(pk=own["id"]).resources == {"model": ["gpt"]}
