"""The shared graph fixtures through the gateway's validate endpoint: same issues, same hash.

The runner's tests run the same fixtures (tests/runner/test_engine_fixtures.py), so
both sides agree on every document.
"""

import copy
from typing import Any

import pytest

from contracts.fixtures import load_graph_fixtures
from contracts.hashing import content_sha256
from contracts.normalize import normalize
from kionga.resource_models import ApiConnection, Dataset, Function, KnowledgeBase, ModelEndpoint
from tests.conftest import Api
from tests.versions_helpers import prompt_graph, published

URL = "/api/v1/agent-designs/validate"
MAKERS: dict[str, Any] = {
    "model": lambda p, k: ModelEndpoint.objects.create(project=p, key=k,
                                                       base_url="https://m.test/v1",
                                                       model_name="m"),
    "function": lambda p, k: Function.objects.create(project=p, key=k, url="https://f.test"),
    "connection": lambda p, k: ApiConnection.objects.create(project=p, key=k,
                                                            base_url="https://c.test"),
    "knowledge_base": lambda p, k: KnowledgeBase.objects.create(project=p, key=k),
    "dataset": lambda p, k: Dataset.objects.create(project=p, key=k),
}
FIXTURES = load_graph_fixtures()
# The fixtures name published versions by opaque IDs ("ver-triage-3"); the gateway's are
# the versions' UUIDs. Each known fixture ID becomes a version published in the project,
# and the graph names it by its UUID (so only that graph's hash differs from the fixture's).
VERSION_FIXTURES = [f["name"] for f in FIXTURES if f.get("resources", {}).get("version")]


def _with_versions(graph: dict[str, Any], keys: list[str], user: Any,
                   project: Any) -> dict[str, Any]:
    ids = {key: str(published(user, project, prompt_graph(f"{key}: {{input}}"), key).pk)
           for key in keys}
    graph = copy.deepcopy(graph)
    for node in graph["nodes"]:
        config = node.get("config") or {}
        for name, value in config.items():
            config[name] = ids.get(value, value)
    return graph


def _shape(issues: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(i["code"], i["severity"], i.get("path"), i.get("node_id")) for i in issues]


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f["name"])
def test_it_reports_each_fixture_as_expected(api: Api, alice: Any, acme: Any,
                                             fixture: dict[str, Any]) -> None:
    graph, expected = fixture["graph"], fixture["expected"]
    client = api.client_for(alice)
    if not isinstance(graph, dict) or not isinstance(graph.get("nodes"), list) \
            or not isinstance(graph.get("edges"), list):
        error = api.assert_error(client.post(URL, graph, format="json"), 400, "invalid_document")
        assert {i["code"] for i in error["details"]["issues"]} == {"invalid_document"}
        return
    body = dict(graph)
    sha = expected["content_sha256"]
    if "resources" in fixture:
        for kind, keys in fixture["resources"].items():
            for key in keys if kind != "version" else ():
                MAKERS[kind](acme, key)
        if fixture["resources"].get("version"):
            body = _with_versions(body, fixture["resources"]["version"], alice, acme)
            sha = content_sha256(normalize(body).graph)
        body["project_id"] = acme.pk
    report = client.post(URL, body, format="json").json()
    assert report["runnable"] == expected["runnable"]
    assert report["content_sha256"] == sha
    assert _shape(report["issues"]) == _shape(
        [{"path": None, "node_id": None, **i} for i in expected["issues"]])


def test_it_reproduces_the_fixtures_that_name_published_versions() -> None:
    assert sorted(VERSION_FIXTURES) == ["resources-all-known", "unknown-resource",
                                        "unknown-version"]
