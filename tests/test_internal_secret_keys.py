"""A resource whose secret does not decrypt under the configured keys is refused (503
resource_unavailable, the reason logged for the operator), never called with garbage."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import override_settings

from kionga import secret_box
from kionga.models import Project
from kionga.resource_models import ApiConnection, Function, ModelEndpoint
from tests.internal_helpers import BASE, chat_answer, run_client, start_run, upstream

pytestmark = [pytest.mark.urls("kionga.internal_urls"), pytest.mark.allow_output]

OLD = secret_box.new_key()


def calls(credential: str) -> list[Any]:
    client = run_client(credential)
    return [client.post(BASE + "models/m/predict",
                        {"messages": [{"role": "user", "content": "hi"}]}),
            client.post(BASE + "functions/f/invoke", {"input": "hi"}),
            client.post(BASE + "agent-api-connections/c/invoke",
                        {"method": "POST", "path": "/x", "body": {}})]


def test_a_secret_under_an_unknown_key_is_refused_not_sent(
        carol: User, acme: Project, caplog: pytest.LogCaptureFixture) -> None:
    def route(method: str, path: str, headers: dict[str, str], body: bytes
              ) -> tuple[int, str, bytes]:
        return chat_answer("hello")

    with upstream(route) as (url, seen):
        with override_settings(KIONGA_SECRET_KEYS=[OLD]):
            ModelEndpoint.objects.create(project=acme, key="m", base_url=url, model_name="x",
                                         secret="sk-m")
            Function.objects.create(project=acme, key="f", url=url, secret="sk-f")
            ApiConnection.objects.create(project=acme, key="c", base_url=url,
                                         secret_headers={"X-Key": "sk-c"})
        _, raw = start_run(carol, acme)
        answers = calls(raw)
        assert seen == []
        # With the right key, the same calls go through.
        with override_settings(KIONGA_SECRET_KEYS=[secret_box.new_key(), OLD]):
            assert [a.status_code for a in calls(raw)] == [200, 200, 200]
    assert [a.status_code for a in answers] == [503, 503, 503]
    assert {a.json()["error"]["code"] for a in answers} == {"resource_unavailable"}
    kid = secret_box.parse_keys((OLD,)).ids[0]
    logged = [r.getMessage() for r in caplog.records if r.name == "runs.internal.checks"]
    assert len(logged) == 3 and all(kid in line for line in logged)
