"""Every starter template validates cleanly and runs as it is with the mock model."""

from typing import Any

import pytest

from contracts.normalize import normalize
from designs.starter_templates import TEMPLATES
from runner.engine import run_graph_sync
from runner.inmemory_resources import InMemoryResources
from runner.request import RunRequest
from tests.conftest import Api


def test_it_lists_at_least_four_templates(api: Api, bob: object) -> None:
    body = api.client_for(bob).get("/api/v1/agent-designs/templates").json()  # type: ignore[arg-type]
    assert len(body["templates"]) >= 4
    assert all({"id", "name", "description", "example_input", "graph"} <= set(t)
               for t in body["templates"])


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t["id"])
def test_it_validates_each_template(api: Api, alice: Any, acme: Any, template: Any) -> None:
    body = {"project_id": acme.pk, **template["graph"]}
    report = api.client_for(alice).post("/api/v1/agent-designs/validate", body, format="json")
    assert report.status_code == 200
    data = report.json()
    assert data["runnable"], data["issues"]
    assert [i for i in data["issues"] if i["severity"] == "error"] == []


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t["id"])
def test_it_runs_each_template_with_the_mock_model(template: Any) -> None:
    events: list[dict[str, Any]] = []
    request = RunRequest(graph=normalize(template["graph"]).graph, input=template["example_input"])
    result = run_graph_sync(request, resources=InMemoryResources(), emit=events.append)
    assert result.status == "completed", result.error
    assert result.output is not None and result.output.startswith("mock: ")
    assert events[-1]["type"] == "run.completed"
