"""Events as JSON pages after a seq; runs read with their events; tenants isolated."""

from typing import Any

from runs.models import Run, RunEvent
from tests.conftest import Api
from tests.designs_helpers import make_design


def _run_with_events(alice: Any, acme: Any, count: int) -> Run:
    run = Run.objects.create(project=acme, design=make_design(alice, acme), revision=1,
                             content_sha256="x" * 64, created_by=alice, status="completed")
    for seq in range(count):
        kind = "run.completed" if seq == count - 1 else "node.started"
        RunEvent.objects.create(run=run, seq=seq, type=kind,
                                data={"seq": seq, "type": kind, "at": "2026-11-30T10:00:00Z"})
    return run


def _url(run: Run) -> str:
    return f"/api/v1/agent-designs/{run.design_id}/runs/{run.pk}"


def test_it_pages_after_a_seq(api: Api, alice: Any, bob: Any, acme: Any) -> None:
    run = _run_with_events(alice, acme, 5)
    client = api.client_for(bob)
    page = client.get(f"{_url(run)}/events", {"after": 1, "limit": 2}).json()
    assert [e["seq"] for e in page["events"]] == [2, 3]
    assert (page["next_after"], page["complete"]) == (3, False)
    last = client.get(f"{_url(run)}/events", {"after": 3}).json()
    assert [e["seq"] for e in last["events"]] == [4] and last["complete"] is True
    error = api.assert_error(client.get(f"{_url(run)}/events", {"after": "x"}), 400,
                             "invalid_request")
    assert list(error["details"]["fields"]) == ["after"]


def test_it_reads_a_run_with_its_events(api: Api, alice: Any, bob: Any, acme: Any) -> None:
    run = _run_with_events(alice, acme, 3)
    data = api.client_for(bob).get(_url(run)).json()
    assert data["id"] == str(run.pk) and [e["seq"] for e in data["events"]] == [0, 1, 2]
    listed = api.client_for(bob).get(f"/api/v1/agent-designs/{run.design_id}/runs").json()
    assert [r["id"] for r in listed["runs"]] == [str(run.pk)]


def test_it_hides_runs_of_other_tenants(api: Api, alice: Any, mallory: Any, acme: Any) -> None:
    run = _run_with_events(alice, acme, 2)
    client = api.client_for(mallory)
    for url in (_url(run), f"{_url(run)}/events"):
        api.assert_error(client.get(url), 404, "not_found")
    other = make_design(alice, acme)
    api.assert_error(api.client_for(alice).get(
        f"/api/v1/agent-designs/{other.pk}/runs/{run.pk}"), 404, "not_found")
