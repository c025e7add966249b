"""POST models/{id}/predict: the ModelEndpoint's chat completions, billed to the run."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User

from kionga.models import Project
from kionga.resource_models import ModelEndpoint
from tests.conftest import Api
from tests.internal_helpers import (
    BASE,
    chat_answer,
    closed_port_url,
    json_answer,
    run_client,
    start_run,
    upstream,
)

pytestmark = pytest.mark.urls("kionga.internal_urls")

SECRET = "sk-model-secret-0123456789abcdef"
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi there"}]




def assert_logged_without_secret(caplog: pytest.LogCaptureFixture) -> None:
    # Failures are logged (tests that cause them allow output), never with the secret.
    assert caplog.records and SECRET not in caplog.text


def endpoint(project: Project, base_url: str, key: str = "gpt") -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        project=project, key=key, base_url=base_url + "/v1", model_name="small-1",
        secret=SECRET, price_prompt_per_1k=Decimal("0.5"), price_completion_per_1k=Decimal("2"),
    )


def predict(credential: str, model: str = "gpt", messages: object = MESSAGES) -> Any:
    return run_client(credential).post(BASE + f"models/{model}/predict", {"messages": messages})


def test_it_answers_with_the_completion(carol: User, acme: Project) -> None:
    with upstream(lambda *_: chat_answer("Hello!", prompt=7, completion=3)) as (url, seen):
        endpoint(acme, url)
        _, raw = start_run(carol, acme)
        response = predict(raw)
    assert response.status_code == 200, response.content
    assert response.json() == {"text": "Hello!", "usage": {"tokens": 10, "cost": 0.0095}}


def test_it_calls_the_openai_compatible_api(carol: User, acme: Project) -> None:
    with upstream(lambda *_: chat_answer("ok")) as (url, seen):
        endpoint(acme, url)
        _, raw = start_run(carol, acme)
        predict(raw)
    [call] = seen
    assert (call["method"], call["path"]) == ("POST", "/v1/chat/completions")
    assert call["headers"]["authorization"] == f"Bearer {SECRET}"
    assert json.loads(call["body"]) == {"model": "small-1", "messages": MESSAGES,
                                        "stream": False}


def test_it_adds_tokens_and_cost_to_the_run(carol: User, acme: Project) -> None:
    with upstream(lambda *_: chat_answer("ok", prompt=1000, completion=500)) as (url, _):
        endpoint(acme, url)
        run, raw = start_run(carol, acme)
        predict(raw)
        predict(raw)
    run.refresh_from_db()
    # Per call: 1000/1000 × 0.5 + 500/1000 × 2 = 1.5
    assert (run.tokens, run.cost) == (3000, Decimal("3.000000"))


def test_it_estimates_tokens_when_the_server_sends_no_usage(carol: User, acme: Project) -> None:
    answer = json_answer(200, {"choices": [{"message": {"content": "one two three"}}]})
    with upstream(lambda *_: answer) as (url, _):
        endpoint(acme, url)
        run, raw = start_run(carol, acme)
        response = predict(raw)
    # Words of the prompt + the reply, billed at the endpoint's prices.
    assert response.json()["usage"] == {"tokens": 4 + 3, "cost": 0.008}
    run.refresh_from_db()
    assert run.tokens == 7


def test_it_denies_another_projects_model_like_a_missing_one(
    api: Api, carol: User, acme: Project, evil: Project
) -> None:
    endpoint(evil, "http://127.0.0.1:9", key="theirs")
    _, raw = start_run(carol, acme)
    other = api.assert_error(predict(raw, "theirs"), 404, "resource_denied")
    missing = api.assert_error(predict(raw, "nowhere"), 404, "resource_denied")
    assert other["message"].replace("theirs", "X") == missing["message"].replace("nowhere", "X")


@pytest.mark.parametrize("messages", [[], "hi", [{"role": "robot", "content": "x"}],
                                      [{"role": "user", "content": 5}], None])
def test_it_rejects_bad_messages(api: Api, carol: User, acme: Project, messages: object) -> None:
    endpoint(acme, "http://127.0.0.1:9")
    _, raw = start_run(carol, acme)
    api.assert_error(predict(raw, messages=messages), 400, "invalid_request")


@pytest.mark.allow_output  # upstream failures are logged, as they should be
@pytest.mark.parametrize("status,expected", [(500, 502), (503, 502), (429, 503)])
def test_it_maps_server_errors_to_resource_unavailable(
    api: Api, carol: User, acme: Project, status: int, expected: int,
    caplog: pytest.LogCaptureFixture,
) -> None:
    with upstream(lambda *_: json_answer(status, {"error": "boom"})) as (url, _):
        endpoint(acme, url)
        run, raw = start_run(carol, acme)
        api.assert_error(predict(raw), expected, "resource_unavailable")
    run.refresh_from_db()
    assert run.tokens == 0
    assert_logged_without_secret(caplog)


@pytest.mark.allow_output  # upstream failures are logged, as they should be
def test_it_maps_a_client_error_to_upstream_rejected(
    api: Api, carol: User, acme: Project, caplog: pytest.LogCaptureFixture
) -> None:
    with upstream(lambda *_: json_answer(400, {"error": "context too long"})) as (url, _):
        endpoint(acme, url)
        _, raw = start_run(carol, acme)
        error = api.assert_error(predict(raw), 422, "upstream_rejected")
    assert error["details"] == {"status": 400}
    assert_logged_without_secret(caplog)


@pytest.mark.allow_output  # upstream failures are logged, as they should be
def test_it_maps_an_unreachable_endpoint_to_resource_unavailable(
    api: Api, carol: User, acme: Project, caplog: pytest.LogCaptureFixture
) -> None:
    endpoint(acme, closed_port_url())
    _, raw = start_run(carol, acme)
    api.assert_error(predict(raw), 503, "resource_unavailable")
    assert_logged_without_secret(caplog)


@pytest.mark.allow_output  # upstream failures are logged, as they should be
def test_it_maps_a_non_completion_answer_to_resource_unavailable(
    api: Api, carol: User, acme: Project, caplog: pytest.LogCaptureFixture
) -> None:
    with upstream(lambda *_: (200, "text/html", b"<html>proxy login</html>")) as (url, _):
        endpoint(acme, url)
        _, raw = start_run(carol, acme)
        api.assert_error(predict(raw), 502, "resource_unavailable")
    assert_logged_without_secret(caplog)
