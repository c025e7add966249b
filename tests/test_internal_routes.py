"""Only the allowed resource calls and approval create/poll exist on the internal listener."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from approvals.models import ApprovalRequest
from kionga.models import Project
from tests.conftest import Api
from tests.internal_helpers import BASE, run_client, start_run

pytestmark = pytest.mark.urls("kionga.internal_urls")

ALLOWED = [
    ("post", "models/m/predict"),
    ("post", "functions/f/invoke"),
    ("post", "agent-api-connections/c/invoke"),
    ("get", "knowledge-bases"),
    ("post", "knowledge-bases/kb/search"),
    ("get", "datasets/d/object"),
    ("post", "agent-approvals"),
    ("get", "agent-approvals/a"),
]

DISALLOWED = [
    ("get", "me"),
    ("get", "agent-designs"),
    ("post", "agent-designs"),
    ("get", "agent-designs/components"),
    ("post", "agent-designs/validate"),
    ("get", "agent-versions"),
    ("get", "agent-approvals/00000000-0000-0000-0000-000000000000/x"),
    ("get", "models"),
    ("get", "functions"),
    ("get", "datasets"),
]


@pytest.mark.parametrize("method,path", ALLOWED)
def test_it_routes_each_allowed_call(
    api: Api, carol: User, acme: Project, method: str, path: str
) -> None:
    # Unauthenticated, each allowed route answers 401 (it exists), never 404.
    api.assert_error(getattr(api.anon(), method)(BASE + path), 401, "invalid_credential")


@pytest.mark.parametrize("method,path", DISALLOWED)
def test_it_does_not_route_anything_else(
    api: Api, carol: User, acme: Project, method: str, path: str
) -> None:
    _, raw = start_run(carol, acme)
    api.assert_error(getattr(run_client(raw), method)(BASE + path), 404, "not_found")


def test_it_refuses_a_run_deciding_its_own_request(api: Api, carol: User,
                                                   acme: Project) -> None:
    # Issue 11: a run credential on the decision route is 403 on both listeners.
    run, raw = start_run(carol, acme)
    created = run_client(raw).post(BASE + "agent-approvals", {
        "node_id": "ask", "message": "Ship it?", "timeout_seconds": 60})
    approval_id = created.json()["id"]
    decision = run_client(raw).post(BASE + f"agent-approvals/{approval_id}/decision",
                                    {"decision": "approve", "comment": "self-approved"})
    api.assert_error(decision, 403, "forbidden")
    assert ApprovalRequest.objects.get(pk=approval_id).status == "pending"


def test_it_does_not_serve_the_admin_or_the_schema(api: Api, carol: User, acme: Project) -> None:
    _, raw = start_run(carol, acme)
    assert run_client(raw).get("/admin/").status_code == 404
    assert run_client(raw).get("/api/schema/").status_code == 404
    assert run_client(raw).get("/api/docs/").status_code == 404


def test_it_refuses_other_methods_on_allowed_routes(api: Api, carol: User, acme: Project) -> None:
    _, raw = start_run(carol, acme)
    client = run_client(raw)
    api.assert_error(client.delete(BASE + "knowledge-bases"), 405, "method_not_allowed")
    api.assert_error(client.get(BASE + "models/m/predict"), 405, "method_not_allowed")
