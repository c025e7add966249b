"""A run credential reaches only the resources its run's graph names: another resource
of the same project is the same 404 as a missing one."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from kionga.models import Project
from kionga.resource_models import (
    ApiConnection,
    Dataset,
    DatasetObject,
    Function,
    KnowledgeBase,
    ModelEndpoint,
)
from tests.conftest import Api
from tests.internal_helpers import BASE, chat_answer, json_answer, run_client, start_run, upstream

pytestmark = pytest.mark.urls("kionga.internal_urls")


def resources(project: Project, url: str, *keys: str) -> None:
    for key in keys:
        Function.objects.create(project=project, key=key, url=url + "/hook")
        ApiConnection.objects.create(project=project, key=key, base_url=url)
        ModelEndpoint.objects.create(project=project, key=key, base_url=url, model_name="m")
        KnowledgeBase.objects.create(project=project, key=key, name=key)
        dataset = Dataset.objects.create(project=project, key=key)
        DatasetObject.objects.create(dataset=dataset, key="k", value="v")


def calls(key: str) -> list[tuple[str, str, Any]]:
    return [
        ("post", f"functions/{key}/invoke", {"input": 1}),
        ("post", f"agent-api-connections/{key}/invoke", {"method": "POST", "path": "/x"}),
        ("post", f"models/{key}/predict", {"messages": [{"role": "user", "content": "hi"}]}),
        ("post", f"knowledge-bases/{key}/search", {"query": "v"}),
        ("get", f"datasets/{key}/object?key=k", None),
    ]


def answer(method: str, path: str, headers: dict[str, str], body: bytes) -> Any:
    return chat_answer("hello") if path.endswith("/chat/completions") else json_answer(200, {})


def test_it_refuses_resources_outside_the_graph_like_missing_ones(
    api: Api, carol: User, acme: Project
) -> None:
    with upstream(answer) as (url, seen):
        resources(acme, url, "named", "other")
        graph = {"function": ["named"], "connection": ["named"], "model": ["named"],
                 "knowledge_base": ["named"], "dataset": ["named"]}
        _, raw = start_run(carol, acme, resources=graph)
        client = run_client(raw)
        for method, path, body in calls("named"):
            response = getattr(client, method)(BASE + path, body, format="json")
            assert response.status_code == 200, (path, response.content)
        called = len(seen)
        for (method, path, body), (_, missing_path, _) in zip(
                calls("other"), calls("nowhere"), strict=True):
            other = api.assert_error(getattr(client, method)(BASE + path, body, format="json"),
                                     404, "resource_denied")
            missing = api.assert_error(
                getattr(client, method)(BASE + missing_path, body, format="json"),
                404, "resource_denied")
            assert other["message"].replace("other", "X") == missing["message"].replace(
                "nowhere", "X")
    assert len(seen) == called  # nothing outside the graph was called


def test_it_refuses_built_in_tools_outside_the_graph(api: Api, carol: User,
                                                      acme: Project) -> None:
    _, raw = start_run(carol, acme, resources={"function": ["word_count"]})
    client = run_client(raw)
    assert client.post(BASE + "functions/word_count/invoke", {"input": "a b"}).status_code == 200
    api.assert_error(client.post(BASE + "functions/uppercase/invoke", {"input": "a"}), 404,
                     "resource_denied")


def test_it_lists_only_the_graphs_knowledge_bases(carol: User, acme: Project) -> None:
    for key in ("faq", "hr-private", "policies"):
        KnowledgeBase.objects.create(project=acme, key=key, name=key.upper())
    _, raw = start_run(carol, acme, resources={"knowledge_base": ["faq", "policies"]})
    response = run_client(raw).get(BASE + "knowledge-bases")
    assert response.json() == {"knowledge_bases": [{"id": "faq", "name": "FAQ"},
                                                   {"id": "policies", "name": "POLICIES"}]}
