"""Runs through a real worker: signed tasks in, events out in Redis, slot freed.

The worker is a `celery -A runner.celery_app worker` subprocess (conftest); tasks are
sent by a plain Celery client after taking a slot, as the gateway does.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import jsonschema
import redis
from celery import Celery

from runner import protocol, task_signature
from tests.runner_process.runner_kit import (
    TOKEN,
    Worker,
    credential_of,
    ingest_events,
    ingest_records,
    knowledge_graph,
    lease_of,
    mock_graph,
    payload,
    read_run,
    send,
    slow_gateway,
    stream_events,
    wait_for,
)

ROOT = Path(__file__).resolve().parents[2]
VALIDATOR = jsonschema.Draft202012Validator(
    json.loads((ROOT / "contracts/schemas/run-event.v1.schema.json").read_text()))


def stored(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] != "node.delta"]


def test_it_runs_a_mock_graph_to_completion(runner_worker: Worker, rds: redis.Redis,
                                            celery_client: Celery) -> None:
    run_id = send(celery_client, rds, payload(mock_graph(), text="hello there"))
    events = read_run(rds, run_id)
    for event in events:
        VALIDATOR.validate(event)
    kept = stored(events)
    assert [e["seq"] for e in kept] == list(range(len(kept)))
    assert kept[0]["type"] == "run.started"
    assert events[-1]["type"] == "run.completed"
    assert events[-1]["output"] == "mock: Answer: hello there"
    deltas = [e for e in events if e["type"] == "node.delta"]
    assert [d["delta_index"] for d in deltas] == list(range(len(deltas))) and deltas
    # The gateway's ingest stream gets the stored events only, identical, in order.
    assert ingest_events(rds, run_id) == kept
    # And one node record per node, with the run's record MAC, never in the live stream.
    records = ingest_records(rds, run_id)
    assert sorted(r["node_id"] for r in records) == sorted(
        e["node_id"] for e in kept if e["type"] == "node.completed")
    assert all("inputs" not in e for e in stream_events(rds, run_id))
    assert 0 < rds.ttl(protocol.run_stream(run_id)) <= protocol.STREAM_TTL_SECONDS
    # The slot is freed once the last event is in Redis.
    assert wait_for(lambda: not protocol.slot_alive(rds, run_id), 2)


def test_it_logs_a_run_by_its_run_id_only(runner_worker: Worker, rds: redis.Redis,
                                          celery_client: Celery) -> None:
    """At INFO (the Procfile's level) a run is one line naming its run, not also
    Celery's received and succeeded lines per task, which name only a Celery task ID
    and cost every run their formatting in two processes."""
    run_id = send(celery_client, rds, payload(mock_graph()))
    assert read_run(rds, run_id)[-1]["type"] == "run.completed"
    assert wait_for(lambda: f"run {run_id}: completed" in runner_worker.log(), 5)
    log = runner_worker.log()
    assert " received" not in log and " succeeded in " not in log


def test_it_drops_a_task_with_a_bad_signature(runner_worker: Worker, rds: redis.Redis,
                                              celery_client: Celery) -> None:
    body = payload(mock_graph())
    foreign = task_signature.sign(body, "another-token-0123")
    run_id = send(celery_client, rds, body, signature=foreign)
    # A correctly signed task sent after it runs; by then the bad one was dealt with.
    read_run(rds, send(celery_client, rds, payload(mock_graph())))
    assert stream_events(rds, run_id) == [] and ingest_events(rds, run_id) == []
    assert rds.get(protocol.claim_key(run_id)) is None
    # Untouched: still the queued lease, not renewed as a running one.
    left = rds.pttl(protocol.lease_key(lease_of(body)))
    assert left > protocol.RUNNING_LEASE_SECONDS * 1000
    assert wait_for(lambda: "invalid signature" in runner_worker.log(), 5)
    assert credential_of(body) not in runner_worker.log()
    protocol.release_slot(rds, run_id)


def test_it_runs_a_redelivered_task_once(runner_worker: Worker, rds: redis.Redis,
                                         celery_client: Celery) -> None:
    body = payload(mock_graph())
    run_id = send(celery_client, rds, body)
    send(celery_client, rds, body, take_slot=False)
    read_run(rds, run_id)
    assert wait_for(lambda: f"run {run_id}: already claimed" in runner_worker.log(), 5)
    events = stored(stream_events(rds, run_id))
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert [e["type"] for e in events].count("run.started") == 1
    assert len(ingest_events(rds, run_id)) == len(events)


def test_it_only_reports_a_cancel_requested_before_the_start(
        runner_worker: Worker, rds: redis.Redis, celery_client: Celery) -> None:
    body = payload(mock_graph())
    rds.set(protocol.cancel_key(body["run_id"]), "1", ex=60)
    run_id = send(celery_client, rds, body)
    events = read_run(rds, run_id)
    assert [(e["seq"], e["type"], e["reason"]) for e in events] == [
        (0, "run.cancelled", "cancelled")]
    VALIDATOR.validate(events[0])
    assert ingest_events(rds, run_id) == events
    assert wait_for(lambda: not protocol.slot_alive(rds, run_id), 2)


def test_it_cancels_a_run_mid_way(runner_worker: Worker, rds: redis.Redis,
                                  celery_client: Celery) -> None:
    with slow_gateway(delay=20) as (url, seen):
        run_id = send(celery_client, rds, payload(knowledge_graph(), callback_url=url))
        read_run(rds, run_id, until=lambda e: e["type"] == "node.started"
                 and e.get("node_id") == "search")
        assert wait_for(lambda: bool(seen), 5)  # the search is in flight at the gateway
        started = time.monotonic()
        rds.set(protocol.cancel_key(run_id), "1", ex=60)
        events = read_run(rds, run_id, seconds=5)
        assert time.monotonic() - started < 2
    assert events[-1]["type"] == "run.cancelled"
    time.sleep(0.3)
    assert stream_events(rds, run_id)[-1] == events[-1]  # nothing after it
    assert wait_for(lambda: not protocol.slot_alive(rds, run_id), 2)


def test_it_does_not_run_a_task_whose_slot_is_gone(runner_worker: Worker, rds: redis.Redis,
                                                   celery_client: Celery) -> None:
    run_id = send(celery_client, rds, payload(mock_graph()), take_slot=False)
    read_run(rds, send(celery_client, rds, payload(mock_graph())))
    assert wait_for(lambda: rds.get(protocol.claim_key(run_id)) is not None, 2)
    assert stream_events(rds, run_id) == []


def test_it_does_not_run_a_task_whose_secrets_do_not_open(
        runner_worker: Worker, rds: redis.Redis, celery_client: Celery) -> None:
    body, other = payload(mock_graph()), payload(mock_graph())
    body["sealed"] = other["sealed"]  # sealed for another run: no lease, no event key
    assert protocol.acquire_slot(rds, body["run_id"], 8) == protocol.SLOT_TAKEN
    run_id = send(celery_client, rds, body, take_slot=False)
    read_run(rds, send(celery_client, rds, payload(mock_graph())))
    assert wait_for(lambda: f"run {run_id}: its sealed secrets are missing" in
                    runner_worker.log(), 5)
    assert stream_events(rds, run_id) == [] and rds.get(protocol.claim_key(run_id)) is None
    protocol.release_slot(rds, run_id)  # else the gateway's reaper ends it


def test_it_redacts_the_run_credential(runner_worker: Worker, rds: redis.Redis,
                                       celery_client: Celery) -> None:
    body = payload(mock_graph())
    body["input"] = f"my key is {credential_of(body)}"
    events = read_run(rds, send(celery_client, rds, body))
    assert events[-1]["type"] == "run.completed"
    assert credential_of(body) not in json.dumps(events)
    assert TOKEN not in json.dumps(events)
