"""subflow, map and loop name a version of the design's project, or the graph is not runnable:
a missing, malformed and another project's version ID are the same `unknown_version`."""

from typing import Any

import pytest

from designs.actions import do_create_design
from tests.conftest import Api
from tests.versions_helpers import flow_graph, prompt_graph, published


def _issues(api: Api, user: Any, project: Any, graph: dict[str, Any]) -> dict[str, Any]:
    design = do_create_design(user, project, "Flow user", "", graph)
    return dict(api.client_for(user).get(f"/api/v1/agent-designs/{design.pk}").json()
                ["validation"])


@pytest.mark.parametrize("kind", ["subflow", "map", "loop"])
def test_it_accepts_a_version_of_the_project(api: Api, alice: Any, acme: Any,
                                             kind: str) -> None:
    version = published(alice, acme, prompt_graph())
    validation = _issues(api, alice, acme, flow_graph(kind, str(version.pk)))
    assert validation["runnable"], validation["issues"]


@pytest.mark.parametrize("kind", ["subflow", "map", "loop"])
def test_it_refuses_foreign_missing_and_malformed_ids_alike(api: Api, alice: Any, acme: Any,
                                                           mallory: Any, evil: Any,
                                                           kind: str) -> None:
    foreign = published(mallory, evil, prompt_graph())
    messages = set()
    for version_id in (str(foreign.pk), "6f1c1c8e-0000-4000-8000-000000000000", "v-nope"):
        validation = _issues(api, alice, acme, flow_graph(kind, version_id))
        assert not validation["runnable"]
        [issue] = [i for i in validation["issues"] if i["code"] == "unknown_version"]
        assert issue["path"] == "nodes.1.config.subflow"
        messages.add(issue["message"].replace(version_id, "ID"))
    assert len(messages) == 1, messages


def test_it_checks_versions_on_the_unsaved_validate_route(api: Api, alice: Any,
                                                          acme: Any) -> None:
    version = published(alice, acme, prompt_graph())
    client = api.client_for(alice)
    ok = client.post("/api/v1/agent-designs/validate",
                     {"project_id": acme.pk, **flow_graph("map", str(version.pk))}, format="json")
    assert ok.json()["runnable"]
    bad = client.post("/api/v1/agent-designs/validate",
                      {"project_id": acme.pk, **flow_graph("map", "v-nope")}, format="json")
    assert [i["code"] for i in bad.json()["issues"]] == ["unknown_version"]
