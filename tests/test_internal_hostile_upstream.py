"""An upstream answering JSON the platform cannot hold (lone surrogates, 1e999, NaN,
nesting past the bound) is a 502 resource_unavailable that says so, never a 500."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kionga.models import Project
from kionga.parsers import MAX_JSON_DEPTH
from kionga.resource_models import ApiConnection, Function, ModelEndpoint
from tests.internal_helpers import BASE, run_client, start_run, upstream

pytestmark = pytest.mark.urls("kionga.internal_urls")

HOSTILE = st.sampled_from([
    '{"choices": [{"message": {"content": "a\\ud800"}}]}',
    '{"x\\udfff": 1}',
    '{"n": 1e999}',
    '{"n": NaN}',
    "[-Infinity]",
    "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1),
    "[" * 5000 + "]" * 5000,
])

CALLS = {
    "predict": ("models/gpt/predict", {"messages": [{"role": "user", "content": "hi"}]}),
    "function": ("functions/hook/invoke", {"input": 1}),
    "connection": ("agent-api-connections/api/invoke", {"method": "GET", "path": "/x"}),
}


@pytest.mark.allow_output  # upstream failures are logged
def test_it_refuses_hostile_upstream_json(carol: User, acme: Project) -> None:
    answer: dict[str, bytes] = {}
    with upstream(lambda *_: (200, "application/json", answer["body"])) as (url, _):
        ModelEndpoint.objects.create(project=acme, key="gpt", base_url=url, model_name="m")
        Function.objects.create(project=acme, key="hook", url=url + "/hook")
        ApiConnection.objects.create(project=acme, key="api", base_url=url)
        _, raw = start_run(carol, acme)
        client = run_client(raw)

        @settings(max_examples=30, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(body=HOSTILE, call=st.sampled_from(sorted(CALLS)))
        def check(body: str, call: str) -> None:
            answer["body"] = body.encode()
            path, request = CALLS[call]
            response = client.post(BASE + path, request, format="json")
            assert response.status_code == 502, (call, body[:80], response.content[:300])
            error: dict[str, Any] = response.json()["error"]
            assert error["code"] == "resource_unavailable", error

        check()


@pytest.mark.allow_output
def test_it_names_the_problem(carol: User, acme: Project) -> None:
    with upstream(lambda *_: (200, "application/json", b'{"n": 1e999}')) as (url, _):
        Function.objects.create(project=acme, key="hook", url=url + "/hook")
        _, raw = start_run(carol, acme)
        response = run_client(raw).post(BASE + "functions/hook/invoke", {"input": 1},
                                        format="json")
    message = response.json()["error"]["message"]
    assert message.startswith("Function 'hook' answered JSON that cannot be used"), message
    assert "finite numbers" in message
