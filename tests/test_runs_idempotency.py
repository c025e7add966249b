"""Idempotency-Key: same key and body → the same run; another body → 422; in flight → 409."""

from typing import Any

import pytest
import redis

from runs.models import IdempotencyKey, Run
from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.runs_helpers import start_url

# Real commits: a run is dispatched only when its transaction commits.
pytestmark = pytest.mark.django_db(transaction=True)


def test_it_replays_the_first_answer(api: Api, alice: Any, acme: Any, runner_configured: Any,
                                     rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    client = api.client_for(alice)
    first = client.post(start_url(design), {"input": "a"}, format="json",
                        HTTP_IDEMPOTENCY_KEY="k1")
    again = client.post(start_url(design), {"input": "a"}, format="json",
                        HTTP_IDEMPOTENCY_KEY="k1")
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["id"] == again.json()["id"] and Run.objects.count() == 1


def test_it_refuses_another_body_with_the_same_key(api: Api, alice: Any, acme: Any,
                                                   runner_configured: Any,
                                                   rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    client = api.client_for(alice)
    client.post(start_url(design), {"input": "a"}, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    response = client.post(start_url(design), {"input": "b"}, format="json",
                           HTTP_IDEMPOTENCY_KEY="k1")
    api.assert_error(response, 422, "idempotency_mismatch")


def test_it_scopes_keys_to_the_caller(api: Api, alice: Any, carol: Any, acme: Any,
                                      runner_configured: Any, rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    a = api.client_for(alice).post(start_url(design), {}, format="json", HTTP_IDEMPOTENCY_KEY="k")
    c = api.client_for(carol).post(start_url(design), {}, format="json", HTTP_IDEMPOTENCY_KEY="k")
    assert (a.status_code, c.status_code) == (201, 201) and a.json()["id"] != c.json()["id"]


def test_it_answers_409_while_the_first_is_in_flight(api: Api, alice: Any, acme: Any,
                                                     runner_configured: Any,
                                                     rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    from runs.start import StartRequest

    fingerprint = StartRequest("", None, None, False, None, None).fingerprint()
    IdempotencyKey.objects.create(project=acme, user=alice, key="busy",
                                  request_hash=fingerprint)
    response = api.client_for(alice).post(start_url(design), {}, format="json",
                                          HTTP_IDEMPOTENCY_KEY="busy")
    api.assert_error(response, 409, "idempotency_in_progress")


def test_it_frees_the_key_when_the_start_fails(api: Api, alice: Any, acme: Any,
                                               runner_configured: Any,
                                               rds: redis.Redis) -> None:
    runner_configured.KIONGA_DESIGNER_MAX_RUNS = 0
    design = make_design(alice, acme)
    client = api.client_for(alice)
    api.assert_error(client.post(start_url(design), {}, format="json",
                                 HTTP_IDEMPOTENCY_KEY="retry-me"), 429, "runner_at_capacity")
    runner_configured.KIONGA_DESIGNER_MAX_RUNS = 1
    assert client.post(start_url(design), {}, format="json",
                       HTTP_IDEMPOTENCY_KEY="retry-me").status_code == 201


def test_it_names_the_header_of_a_bad_key(api: Api, alice: Any, acme: Any,
                                          runner_configured: Any, rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    client = api.client_for(alice)
    for key in ("  ", "k" * 201):
        error = api.assert_error(client.post(start_url(design), {}, format="json",
                                             HTTP_IDEMPOTENCY_KEY=key), 400, "invalid_request")
        assert list(error["details"]["fields"]) == ["Idempotency-Key"]
    assert Run.objects.count() == 0
