"""A cancel while Redis is full (maxmemory reached; it never evicts, it refuses writes)
or gone answers 503 service_unavailable with Retry-After, not a server error, and
changes nothing: the run stays active and its credential keeps working, so the
cancel may simply be sent again."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kionga.redis_client import sync_redis
from runs.credentials import find_active_run, issue_credential
from runs.models import Run
from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.redis_kit import PrivateRedis

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def full_redis(runner_configured: Any, private_redis: PrivateRedis) -> Iterator[None]:
    runner_configured.REDIS_URL = private_redis.url
    sync_redis.cache_clear()  # the process's client was made for the suite's Redis
    private_redis.fill()
    yield
    sync_redis.cache_clear()


@pytest.mark.allow_output  # Django logs every 5xx answer
def test_a_cancel_on_a_full_redis_is_503_and_changes_nothing(
        api: Api, alice: Any, acme: Any, full_redis: None) -> None:
    design = make_design(alice, acme)
    run = Run.objects.create(project=acme, design=design, revision=1,
                             content_sha256="x" * 64, created_by=alice, status="running")
    credential = issue_credential(run)
    response = api.client_for(alice).post(
        f"/api/v1/agent-designs/{design.pk}/runs/{run.pk}/cancel")
    error = api.assert_error(response, 503, "service_unavailable")
    assert error["message"] == ("The run cannot be cancelled right now: Redis is unavailable. "
                                "Try again shortly.")
    assert response["Retry-After"] == "1"
    run.refresh_from_db()
    assert run.status == "running"
    assert find_active_run(credential) is not None
