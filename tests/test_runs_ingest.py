"""The ingester stores every event exactly once and in order, and applies it to its run."""

from datetime import timedelta
from typing import Any

import pytest
import redis
from django.utils import timezone

from approvals.models import ApprovalRequest
from kionga.models import AuditEvent
from runner import protocol
from runs import ingest
from runs.credentials import find_active_run, issue_credential
from runs.models import RunEvent
from tests.ingest_helpers import drain, entries, events, make_run, send, seqs

pytestmark = pytest.mark.django_db(transaction=True)

COMPLETE = ("run.started", "node.started", "run.completed")


def test_it_stores_each_event_once(alice: Any, acme: Any) -> None:
    run = make_run(alice, acme)
    batch = entries(run, events(*COMPLETE))
    assert ingest.store_entries(batch[:2]).stored == 2
    assert ingest.store_entries(batch[:2]).stored == 0  # redelivered
    assert seqs(run) == [0, 1]
    run.refresh_from_db()
    assert run.status == "running" and run.started_at is not None


def test_it_finishes_the_run(alice: Any, acme: Any) -> None:
    run = make_run(alice, acme)
    credential = issue_credential(run)
    ingest.store_entries(entries(run, events(*COMPLETE)))
    run.refresh_from_db()
    assert (run.status, run.output, run.tokens) == ("completed", "done", 7)
    assert find_active_run(credential) is None
    assert AuditEvent.objects.filter(action="run.finished", target_id=str(run.pk)).count() == 1


def test_it_drops_events_after_the_end(alice: Any, acme: Any) -> None:
    run = make_run(alice, acme)
    ingest.store_entries(entries(run, events(*COMPLETE)))
    late = events(*COMPLETE, "node.completed")
    ingest.store_entries(entries(run, late[3:]))
    assert seqs(run) == [0, 1, 2]


def test_it_cancels_pending_approvals_when_a_run_is_cancelled(alice: Any, acme: Any) -> None:
    run = make_run(alice, acme)
    approval = ApprovalRequest.objects.create(project=acme, run=run, node_id="ok",
                                              expires_at=timezone.now() + timedelta(minutes=1))
    ingest.store_entries(entries(run, events("run.cancelled")))
    approval.refresh_from_db()
    assert approval.status == "cancelled"
    assert AuditEvent.objects.filter(action="run.cancelled", target_id=str(run.pk)).exists()


def test_it_drains_the_shared_stream(alice: Any, acme: Any, stream: redis.Redis) -> None:
    run = make_run(alice, acme)
    send(stream, run, events(*COMPLETE))
    drain(stream)
    assert RunEvent.objects.filter(run=run).count() == 3
    pending = stream.xpending(protocol.INGEST_STREAM, protocol.INGEST_GROUP)
    assert pending["pending"] == 0
