"""The reaper's ending stands when Redis refuses what follows it: the run is failed
with runner_lost in the database (credential revoked, audit written), the refusal is
logged at ERROR, and nothing is raised to the ingester's loop — whether Redis is full
(OutOfMemoryError) or gone (ConnectionError)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
import redis
from django.utils import timezone

from kionga.models import AuditEvent
from runs import reaper
from runs.credentials import find_active_run, issue_credential
from runs.models import Run, RunEvent
from tests.designs_helpers import make_design
from tests.internal_helpers import closed_port_url
from tests.redis_kit import PrivateRedis

pytestmark = pytest.mark.django_db(transaction=True)


def _full(server: PrivateRedis) -> redis.Redis:
    server.fill()
    return server.client()


def _gone(server: PrivateRedis) -> redis.Redis:
    return redis.Redis.from_url(closed_port_url().replace("http://", "redis://") + "/0")


REFUSALS: dict[str, tuple[Callable[[PrivateRedis], redis.Redis], str]] = {
    "full": (_full, "OutOfMemoryError"),
    "gone": (_gone, "ConnectionError"),
}


@pytest.mark.allow_output  # the refusal is logged on purpose
@pytest.mark.parametrize("refusal", list(REFUSALS))
def test_the_ending_stands_when_redis_refuses_the_writes_after_it(
        alice: Any, acme: Any, private_redis: PrivateRedis, refusal: str,
        caplog: pytest.LogCaptureFixture) -> None:
    run = Run.objects.create(project=acme, design=make_design(alice, acme), revision=1,
                             content_sha256="x" * 64, created_by=alice, status="running")
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(seconds=30))
    credential = issue_credential(run)
    make_client, reason = REFUSALS[refusal]
    client = make_client(private_redis)
    assert reaper.reap(client, [str(run.pk)]) == 1
    run.refresh_from_db()
    assert run.status == "failed" and run.error is not None
    assert run.error["code"] == "runner_lost"
    assert RunEvent.objects.get(run=run).data["reason"] == "runner_lost"
    assert find_active_run(credential) is None
    assert AuditEvent.objects.filter(action="run.finished", target_id=str(run.pk)).exists()
    [record] = [r for r in caplog.records if r.name == "runs.reaper"]
    assert record.levelname == "ERROR"
    assert f"run {run.pk} ended (runner_lost) but Redis refused" in record.getMessage()
    assert reason in record.getMessage()
    assert reaper.reap(client, [str(run.pk)]) == 0  # ended once
