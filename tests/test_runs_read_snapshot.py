"""One read of a run answers from one snapshot: its status and its stored events agree
even when the ingester commits the run's end between the row's read and the events'
(GET .../runs/{run_id}, and the JSON events page's `complete`).

The ingester's write is committed for real, from another thread (its own database
connection), at the moment the route is about to read the events."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connection

from runner.protocol import FINAL_STATUSES, TERMINAL_TYPES
from runs import ingest, read
from runs.models import Run
from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.ingest_helpers import entries, events, make_run

# Committed data: the ingester writes from another connection.
pytestmark = pytest.mark.django_db(transaction=True)


def ingest_the_end(run: Run) -> None:
    """The ingester stores the run's start and end, and commits, in another thread."""

    def store() -> None:
        try:
            ingest.store_entries(entries(run, events("run.started", "run.completed")))
        finally:
            connection.close()

    thread = threading.Thread(target=store)
    thread.start()
    thread.join()


@pytest.fixture
def ended_while_read(monkeypatch: pytest.MonkeyPatch, alice: Any,
                     acme: Any) -> Iterator[Run]:
    """A queued run whose end the ingester commits just before the route reads its
    events (after it read the run's row)."""
    run = make_run(alice, acme, make_design(alice, acme))
    original: Callable[..., Any] = read.events_after

    def events_after(*args: Any, **kwargs: Any) -> Any:
        if not Run.objects.filter(pk=run.pk, status="completed").exists():
            ingest_the_end(run)
        return original(*args, **kwargs)

    monkeypatch.setattr(read, "events_after", events_after)
    yield run
    assert Run.objects.get(pk=run.pk).status == "completed"  # the write did happen


def url(run: Run) -> str:
    return f"/api/v1/agent-designs/{run.design_id}/runs/{run.pk}"


def ended(found: list[dict[str, Any]]) -> bool:
    return any(event["type"] in TERMINAL_TYPES for event in found)


def test_a_run_and_its_events_come_from_one_snapshot(
        api: Api, alice: Any, ended_while_read: Run) -> None:
    client = api.client_for(alice)
    first = client.get(url(ended_while_read)).json()
    assert (first["status"] in FINAL_STATUSES) == ended(first["events"]), first
    again = client.get(url(ended_while_read)).json()
    assert again["status"] == "completed" and ended(again["events"])


def test_an_events_page_is_complete_exactly_when_it_holds_the_end(
        api: Api, alice: Any, ended_while_read: Run) -> None:
    client = api.client_for(alice)
    page = client.get(url(ended_while_read) + "/events?after=-1").json()
    assert page["complete"] == ended(page["events"]), page
    again = client.get(url(ended_while_read) + "/events?after=-1").json()
    assert again["complete"] and ended(again["events"])
