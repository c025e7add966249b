"""Tool and API calls have side effects: a run started without allow_side_effects may
not make them, whatever its runner sends (403 side_effects_not_allowed)."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User

from kionga.models import Project
from kionga.resource_models import ApiConnection, Function
from tests.conftest import Api
from tests.internal_helpers import BASE, json_answer, run_client, start_run, upstream

pytestmark = pytest.mark.urls("kionga.internal_urls")


def test_it_refuses_functions_and_connections_without_allow_side_effects(
    api: Api, carol: User, acme: Project
) -> None:
    with upstream(lambda *_: json_answer(200, {"done": True})) as (url, seen):
        Function.objects.create(project=acme, key="refund", url=url + "/refund")
        ApiConnection.objects.create(project=acme, key="crm", base_url=url + "/api")
        _, raw = start_run(carol, acme, allow_side_effects=False)
        client = run_client(raw)
        for name in ("refund", "word_count"):  # a webhook and a built-in tool
            error = api.assert_error(
                client.post(BASE + f"functions/{name}/invoke", {"input": 1}), 403,
                "side_effects_not_allowed")
            assert "allow_side_effects" in error["message"]
        api.assert_error(client.post(BASE + "agent-api-connections/crm/invoke",
                                     {"method": "POST", "path": "/tickets", "body": {}}),
                         403, "side_effects_not_allowed")
    assert seen == []  # nothing reached the outside world


def test_it_allows_them_with_allow_side_effects(carol: User, acme: Project) -> None:
    with upstream(lambda *_: json_answer(200, {"done": True})) as (url, seen):
        Function.objects.create(project=acme, key="refund", url=url + "/refund")
        ApiConnection.objects.create(project=acme, key="crm", base_url=url + "/api")
        _, raw = start_run(carol, acme, allow_side_effects=True)
        client = run_client(raw)
        assert client.post(BASE + "functions/refund/invoke", {"input": 1}).json() == {
            "output": {"done": True}}
        answer = client.post(BASE + "agent-api-connections/crm/invoke",
                             {"method": "POST", "path": "/tickets", "body": {"a": 1}})
        assert answer.json() == {"status": 200, "body": {"done": True}}
    assert [(c["path"], json.loads(c["body"])) for c in seen] == [
        ("/refund", {"input": 1}), ("/api/tickets", {"a": 1})]


def test_it_still_allows_calls_without_side_effects(carol: User, acme: Project) -> None:
    _, raw = start_run(carol, acme, allow_side_effects=False)
    response = run_client(raw).get(BASE + "knowledge-bases")
    assert response.status_code == 200, response.content
