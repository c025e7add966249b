"""GET /api/v1/agent-approvals: the caller's projects only, newest first, paginated."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from approvals.models import ApprovalRequest
from kionga.models import Project
from tests.approvals_helpers import pending, waiting_run
from tests.conftest import Api

URL = "/api/v1/agent-approvals"


def _ids(body: dict[str, Any]) -> list[str]:
    return [a["id"] for a in body["approvals"]]


def test_it_lists_the_callers_requests_newest_first(api: Api, alice: User, bob: User,
                                                    acme: Project, mallory: User,
                                                    evil: Project) -> None:
    run = waiting_run(alice, acme)
    assert run.design is not None
    older, newer = pending(run, node_id="one"), pending(run, node_id="two")
    theirs = pending(waiting_run(mallory, evil))
    body = api.client_for(bob).get(URL).json()
    assert _ids(body) == [str(newer.pk), str(older.pk)]
    assert body["next_before"] is None
    first = body["approvals"][0]
    assert (first["design_id"], first["design_name"], first["run_id"], first["node_id"]) == (
        str(run.design_id), run.design.name, str(run.pk), "two")
    assert (first["message"], first["preview"], first["status"]) == (
        "Send it?", "refund 40 EUR", "pending")
    assert first["decided_by"] is None and first["comment"] is None
    assert _ids(api.client_for(mallory).get(URL).json()) == [str(theirs.pk)]


def test_it_shows_who_decided_and_their_comment(api: Api, alice: User, carol: User,
                                                acme: Project) -> None:
    approval = pending(waiting_run(alice, acme))
    decided = api.client_for(carol).post(f"{URL}/{approval.pk}/decision",
                                         {"decision": "reject", "comment": "not now"})
    assert decided.status_code == 200
    [row] = api.client_for(alice).get(URL).json()["approvals"]
    assert (row["status"], row["decided_by"], row["comment"]) == ("rejected", "carol",
                                                                  "not now")
    assert row["decided_at"] is not None


def test_it_filters_by_status_project_and_run(api: Api, alice: User, acme: Project) -> None:
    first, second = waiting_run(alice, acme), waiting_run(alice, acme)
    a = pending(first)
    b = pending(second)
    overdue = pending(second, seconds=-1)
    client = api.client_for(alice)
    assert _ids(client.get(URL, {"run_id": str(first.pk)}).json()) == [str(a.pk)]
    assert _ids(client.get(URL, {"status": "pending"}).json()) == [str(b.pk), str(a.pk)]
    # Past its deadline: shown (and stored) as expired even before the sweep.
    assert _ids(client.get(URL, {"status": "expired"}).json()) == [str(overdue.pk)]
    assert len(client.get(URL, {"project_id": str(acme.pk)}).json()["approvals"]) == 3


def test_it_answers_404_for_another_tenants_project(api: Api, alice: User, acme: Project,
                                                    evil: Project) -> None:
    pending(waiting_run(alice, acme))
    response = api.client_for(alice).get(URL, {"project_id": str(evil.pk)})
    api.assert_error(response, 404, "not_found")


def test_it_pages_with_a_cursor(api: Api, alice: User, acme: Project) -> None:
    run = waiting_run(alice, acme)
    made = [pending(run, node_id=f"n{i}") for i in range(5)]
    # Two share a creation time: the cursor must still give each exactly once.
    same = timezone.now() - timedelta(minutes=1)
    ApprovalRequest.objects.filter(pk__in=[made[1].pk, made[2].pk]).update(created_at=same)
    client = api.client_for(alice)
    expected = _ids(client.get(URL, {"limit": "200"}).json())
    seen: list[str] = []
    query: dict[str, str] = {"limit": "2"}
    while True:
        body = client.get(URL, query).json()
        seen += _ids(body)
        if body["next_before"] is None:
            break
        query["before"] = body["next_before"]
    assert seen == expected and sorted(seen) == sorted(str(a.pk) for a in made)


@pytest.mark.parametrize(("query", "field"), [
    ({"status": "maybe"}, "status"), ({"limit": "0"}, "limit"), ({"limit": "201"}, "limit"),
    ({"limit": "x"}, "limit"), ({"run_id": "nope"}, "run_id"), ({"project_id": "a"},
                                                                "project_id"),
    ({"before": "2b1c4c5e-0000-4000-8000-000000000000"}, "before"),
])
def test_it_checks_the_query(api: Api, alice: User, acme: Project, query: dict[str, str],
                             field: str) -> None:
    response = api.client_for(alice).get(URL, query)
    error = api.assert_error(response, 400, "invalid_request")
    assert list(error["details"]["fields"]) == [field]


def test_it_does_not_take_another_tenants_request_as_a_cursor(
        api: Api, alice: User, acme: Project, mallory: User, evil: Project) -> None:
    theirs = pending(waiting_run(mallory, evil))
    response = api.client_for(alice).get(URL, {"before": str(theirs.pk)})
    api.assert_error(response, 400, "invalid_request")


def test_it_keeps_paging_when_the_cursors_request_was_decided(api: Api, alice: User,
                                                              acme: Project) -> None:
    run = waiting_run(alice, acme)
    made = [pending(run, node_id=f"n{i}") for i in range(3)]
    client = api.client_for(alice)
    first = client.get(URL, {"status": "pending", "limit": "1"}).json()
    assert _ids(first) == [str(made[2].pk)]
    # Someone decides the request the cursor names before the next page is read.
    ApprovalRequest.objects.filter(pk=made[2].pk).update(status="approved")
    second = client.get(URL, {"status": "pending", "limit": "5",
                              "before": first["next_before"]})
    assert second.status_code == 200, second.content
    assert _ids(second.json()) == [str(made[1].pk), str(made[0].pk)]
