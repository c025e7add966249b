"""Resource secrets never leave the gateway: not in answers (even when the upstream
echoes them back, succeeds or fails), not in error messages, not in log lines."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User

from kionga.models import Project
from kionga.resource_models import ApiConnection, Function, ModelEndpoint
from tests.internal_helpers import BASE, closed_port_url, run_client, start_run, upstream

pytestmark = [pytest.mark.urls("kionga.internal_urls"),
              pytest.mark.allow_output]  # upstream failures are logged (checked below)

MODEL_SECRET = "sk-model-AAAA0123456789abcdefgh"
FUNCTION_SECRET = "fn-BBBB0123456789abcdefgh"
HEADER_SECRET = "hdr-CCCC0123456789abcdefgh"
SECRETS = (MODEL_SECRET, FUNCTION_SECRET, HEADER_SECRET)
STATUSES = [200, 201, 302, 400, 401, 404, 429, 500, 503]


@pytest.fixture(autouse=True)
def quiet_httpx(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    caplog.set_level(logging.WARNING, logger="httpx")
    caplog.set_level(logging.DEBUG, logger="kionga")
    yield
    logged = "\n".join(record.getMessage() for record in caplog.get_records("call"))
    assert not any(secret in logged for secret in SECRETS)


def echoing(status: int, as_json: bool = True) -> Any:
    """An upstream that quotes every header it got, in a chat completion and elsewhere."""

    def route(method: str, path: str, headers: dict[str, str], body: bytes
              ) -> tuple[int, str, bytes]:
        quoted = json.dumps(headers)
        if not as_json:
            return status, "text/html", f"<pre>{quoted}</pre>".encode()
        answer = {"choices": [{"message": {"content": f"you sent {quoted}"}}],
                  "headers": headers, headers.get("authorization", "k"): "as a key",
                  "error": {"message": f"bad key {headers.get('authorization')}"}}
        return status, "application/json", json.dumps(answer).encode()

    return route


def resources(project: Project, url: str) -> None:
    ModelEndpoint.objects.create(project=project, key="m", base_url=url, model_name="x",
                                 secret=MODEL_SECRET)
    Function.objects.create(project=project, key="f", url=url, secret=FUNCTION_SECRET)
    ApiConnection.objects.create(project=project, key="c", base_url=url,
                                 secret_headers={"Authorization": f"Token {HEADER_SECRET}",
                                                 "X-Api-Key": HEADER_SECRET})


def call_all(credential: str) -> list[Any]:
    client = run_client(credential)
    return [
        client.post(BASE + "models/m/predict",
                    {"messages": [{"role": "user", "content": "hi"}]}),
        client.post(BASE + "functions/f/invoke", {"input": "hi"}),
        client.post(BASE + "agent-api-connections/c/invoke",
                    {"method": "POST", "path": "/x", "body": {"a": 1}}),
    ]


def assert_no_secret(responses: list[Any]) -> None:
    for response in responses:
        text = response.content.decode()
        assert response.status_code < 600 and text
        assert not any(secret in text for secret in SECRETS), text
        assert not any(secret in value for secret in SECRETS for _, value in response.items())


@pytest.mark.parametrize("status", STATUSES)
def test_it_never_answers_with_a_secret(carol: User, acme: Project, status: int) -> None:
    with upstream(echoing(status)) as (url, seen):
        resources(acme, url)
        _, raw = start_run(carol, acme)
        responses = call_all(raw)
    assert_no_secret(responses)
    # They were sent, so the scrubbing above had something to do.
    sent = json.dumps([s["headers"] for s in seen])
    assert all(secret in sent for secret in SECRETS)


@pytest.mark.parametrize("status", [200, 500])
def test_it_never_answers_with_a_secret_in_text(carol: User, acme: Project, status: int) -> None:
    with upstream(echoing(status, as_json=False)) as (url, _):
        resources(acme, url)
        _, raw = start_run(carol, acme)
        assert_no_secret(call_all(raw))


def test_it_never_answers_with_a_secret_when_unreachable(carol: User, acme: Project) -> None:
    resources(acme, closed_port_url())
    _, raw = start_run(carol, acme)
    responses = call_all(raw)
    assert [r.status_code for r in responses] == [503, 503, 503]
    assert_no_secret(responses)


def test_it_redacts_an_echoed_secret_instead_of_dropping_the_answer(
    carol: User, acme: Project
) -> None:
    with upstream(echoing(200)) as (url, _):
        resources(acme, url)
        _, raw = start_run(carol, acme)
        predicted, invoked, connected = call_all(raw)
    assert "[redacted]" in predicted.json()["text"]
    assert invoked.json()["output"]["headers"]["authorization"] == "Bearer [redacted]"
    assert connected.json()["body"]["headers"]["x-api-key"] == "[redacted]"
