"""The API is throttled per user (429 throttled with Retry-After); rates come from
settings; a Redis outage lets requests through rather than failing them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import cache
from redis.exceptions import ConnectionError as RedisConnectionError
from rest_framework.throttling import SimpleRateThrottle


@pytest.fixture
def counters(alice: Any, bob: Any) -> Iterator[None]:
    keys = [f"throttle_user_{u.pk}" for u in (alice, bob)]
    cache.delete_many(keys)
    yield
    cache.delete_many(keys)


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
    assert int(throttled["Retry-After"]) > 0
    assert api.client_for(bob).get("/api/v1/me").status_code == 200


@pytest.mark.allow_output  # the outage is logged
def test_it_lets_requests_through_when_redis_is_down(
    api: Any, alice: Any, settings: Any, monkeypatch: Any, caplog: Any
) -> None:
    settings.KIONGA_THROTTLE_USER = "1/minute"

    def down(*args: Any, **kwargs: Any) -> Any:
        raise RedisConnectionError("down")

    monkeypatch.setattr(SimpleRateThrottle.cache, "get", down)
    client = api.client_for(alice)
    assert [client.get("/api/v1/me").status_code for _ in range(3)] == [200, 200, 200]
    assert "throttle counters unavailable" in caplog.text
