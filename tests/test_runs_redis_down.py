"""Redis unreachable when a run starts: 503 service_unavailable, nothing stored."""

from collections.abc import Iterator
from typing import Any

import pytest

from kionga.redis_client import sync_redis
from runs.models import Run
from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.internal_helpers import closed_port_url
from tests.runs_helpers import start_url

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def redis_down(runner_configured: Any) -> Iterator[None]:
    runner_configured.REDIS_URL = closed_port_url().replace("http://", "redis://") + "/0"
    sync_redis.cache_clear()  # the process's client was made for the real URL
    yield
    sync_redis.cache_clear()


@pytest.mark.allow_output  # redis-py may log its retries
def test_it_answers_503_when_redis_is_down(api: Api, alice: Any, acme: Any,
                                           redis_down: None) -> None:
    design = make_design(alice, acme)
    response = api.client_for(alice).post(start_url(design), {"input": "hi"}, format="json",
                                          HTTP_IDEMPOTENCY_KEY="k-1")
    api.assert_error(response, 503, "service_unavailable")
    assert response["Retry-After"] == "1"
    assert Run.objects.count() == 0
