"""Opening an event stream is an API request like any other: it counts against the
user's throttle (KIONGA_THROTTLE_USER), and past it the open is 429 throttled with
Retry-After, with a bearer token and with a session, and the JSON pages of the same
route share the count. Over the real public listener."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from kionga import throttles
from kionga.models import Project
from kionga.redis_client import sync_redis
from kionga.tokens import issue_token
from runs.models import Run
from tests.designs_helpers import make_design
from tests.public_gateway import public_gateway

# Committed data: the gateway is another process with its own connection.
pytestmark = pytest.mark.django_db(transaction=True)

RATE = 3
SSE = {"Accept": "text/event-stream"}
STREAM: dict[str, str] = SSE
PAGE = {"Accept": "application/json"}  # the same route's JSON page, a DRF view


@pytest.fixture(scope="module")
def gateway(django_db_setup: None) -> Iterator[str]:
    with public_gateway(KIONGA_THROTTLE_USER=f"{RATE}/minute") as base:
        yield base


@pytest.fixture
def events_url(alice: User, bob: User, carol: User, acme: Project) -> Iterator[str]:
    """A finished run's stream (each open ends at once), with fresh throttle counters."""
    keys = [f"{throttles.KEY_PREFIX}user:{u.pk}" for u in (alice, bob, carol)]
    sync_redis().delete(*keys)
    design = make_design(alice, acme)
    run = Run.objects.create(project=acme, design=design, status="completed",
                             content_sha256="0" * 64, created_by=alice)
    yield f"/api/v1/agent-designs/{design.pk}/runs/{run.pk}/events"
    sync_redis().delete(*keys)


def opens(client: httpx.Client, url: str, how: dict[str, str]) -> httpx.Response:
    answer = client.get(url, headers={**SSE, **how})
    assert answer.status_code in (200, 429), answer.text
    return answer


def assert_throttled(answer: httpx.Response) -> None:
    assert answer.status_code == 429
    assert answer.json()["error"]["code"] == "throttled"
    assert 0 < int(answer.headers["retry-after"]) <= 60


@pytest.mark.parametrize(("counted", "then"), [(STREAM, PAGE), (PAGE, STREAM)],
                         ids=["stream", "page"])
def test_opening_streams_with_a_token_is_throttled_with_the_pages(
        gateway: str, events_url: str, bob: User, counted: dict[str, str],
        then: dict[str, str]) -> None:
    token = issue_token(bob, "sse")
    with httpx.Client(base_url=gateway, timeout=10.0,
                      headers={"Authorization": f"Bearer {token}"}) as client:
        assert [opens(client, events_url, counted).status_code
                for _ in range(RATE)] == [200] * RATE
        assert_throttled(opens(client, events_url, counted))
        assert_throttled(opens(client, events_url, then))


def test_opening_streams_with_a_session_is_throttled(gateway: str, events_url: str,
                                                     carol: User) -> None:
    browser = Client()
    browser.force_login(carol)
    cookie = f"{settings.SESSION_COOKIE_NAME}={browser.cookies[settings.SESSION_COOKIE_NAME].value}"
    with httpx.Client(base_url=gateway, timeout=10.0, headers={"Cookie": cookie}) as client:
        assert [opens(client, events_url, {}).status_code for _ in range(RATE)] == [200] * RATE
        assert_throttled(opens(client, events_url, {}))
