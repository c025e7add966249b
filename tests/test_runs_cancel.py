"""Cancelling: a run no runner took yet ends at once; a running one is signalled."""

from typing import Any

import pytest
import redis

from contracts.schemas import schema_errors
from runner import protocol
from runs import ingest, ingest_stream
from runs.models import Run
from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.runs_helpers import start_url

pytestmark = pytest.mark.django_db(transaction=True)


def _drain(client: redis.Redis) -> None:
    ingest_stream.ensure_group(client)
    while ingest.drain_once(client, "test", block_ms=20):
        pass


def test_it_ends_a_queued_run_at_once(api: Api, alice: Any, acme: Any, runner_configured: Any,
                                      rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    client = api.client_for(alice)
    run_id = client.post(start_url(design), {}, format="json").json()["id"]
    response = client.post(f"{start_url(design)}/{run_id}/cancel")
    assert response.status_code == 202
    assert rds.get(protocol.cancel_key(run_id)) == b"1"
    assert not protocol.slot_alive(rds, run_id)
    _drain(rds)
    data = client.get(f"{start_url(design)}/{run_id}").json()
    assert data["status"] == "cancelled"
    assert [e["type"] for e in data["events"]] == ["run.cancelled"]
    assert schema_errors("run-event.v1", data["events"][0]) == []
    api.assert_error(client.post(f"{start_url(design)}/{run_id}/cancel"), 409, "run_not_active")


def test_it_signals_a_run_a_runner_has_taken(api: Api, alice: Any, acme: Any,
                                             runner_configured: Any, rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    client = api.client_for(alice)
    run_id = client.post(start_url(design), {}, format="json").json()["id"]
    rds.set(protocol.claim_key(run_id), "runner")
    assert client.post(f"{start_url(design)}/{run_id}/cancel").status_code == 202
    assert rds.get(protocol.cancel_key(run_id)) == b"1"
    assert Run.objects.get(pk=run_id).status == "queued"  # the runner ends it


def test_it_needs_editor_rights(api: Api, alice: Any, bob: Any, mallory: Any, acme: Any,
                                runner_configured: Any, rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    run_id = api.client_for(alice).post(start_url(design), {}, format="json").json()["id"]
    api.assert_error(api.client_for(bob).post(f"{start_url(design)}/{run_id}/cancel"), 403,
                     "forbidden")
    api.assert_error(api.client_for(mallory).post(f"{start_url(design)}/{run_id}/cancel"), 404,
                     "not_found")
