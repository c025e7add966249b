"""The API is throttled per user (429 throttled with Retry-After) in a sliding window
counted atomically in Redis; rates come from settings; a Redis outage lets requests
through rather than failing them."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.db import connection
from redis.exceptions import ConnectionError as RedisConnectionError
from rest_framework.test import APIClient

from kionga import throttles
from kionga.redis_client import sync_redis


@pytest.fixture
def counters(alice: Any, bob: Any) -> Iterator[None]:
    keys = [f"{throttles.KEY_PREFIX}user:{u.pk}" for u in (alice, bob)]
    sync_redis().delete(*keys)
    yield
    sync_redis().delete(*keys)


def test_it_throttles_each_user_on_their_own(
    api: Any, alice: Any, bob: Any, settings: Any, counters: None
) -> None:
    settings.KIONGA_THROTTLE_USER = "3/minute"
    client = api.client_for(alice)
    for _ in range(3):
        assert client.get("/api/v1/me").status_code == 200
    throttled = client.get("/api/v1/agent-designs")
    error = api.assert_error(throttled, 429, "throttled")
    assert "available in" in error["message"]
    assert 0 < int(throttled["Retry-After"]) <= 60
    assert api.client_for(bob).get("/api/v1/me").status_code == 200


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_never_pass_the_rate(
    api: Any, alice: Any, settings: Any, counters: None
) -> None:
    """The window is checked and counted in one script: 20 requests at once, rate 5."""
    settings.KIONGA_THROTTLE_USER = "5/minute"
    token = api.token_for(alice)

    def one(_: int) -> int:
        try:
            client = APIClient(HTTP_AUTHORIZATION=f"Bearer {token}")
            return int(client.get("/api/v1/me").status_code)
        finally:
            connection.close()  # each thread's own connection

    with ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(one, range(20)))
    assert codes.count(200) == 5 and codes.count(429) == 15


@pytest.mark.allow_output  # the outage is logged
def test_it_lets_requests_through_when_redis_is_down(
    api: Any, alice: Any, settings: Any, monkeypatch: Any, caplog: Any
) -> None:
    settings.KIONGA_THROTTLE_USER = "1/minute"

    class Down:
        def eval(self, *args: Any) -> Any:
            raise RedisConnectionError("down")

    monkeypatch.setattr(throttles, "sync_redis", Down)
    client = api.client_for(alice)
    assert [client.get("/api/v1/me").status_code for _ in range(3)] == [200, 200, 200]
    assert "throttle counters unavailable" in caplog.text
