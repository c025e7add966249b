"""Who may not create or decide: people cannot create; a run credential never decides,
on either listener (403)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from approvals.models import ApprovalRequest
from kionga.models import Project
from tests.approvals_helpers import pending
from tests.conftest import Api
from tests.internal_helpers import BASE, run_client, start_run

BODY = {"node_id": "ask", "message": "Send?", "timeout_seconds": 60}


def test_it_refuses_a_person_creating_a_request(api: Api, alice: User, acme: Project) -> None:
    response = api.client_for(alice).post("/api/v1/agent-approvals",
                                          {**BODY, "project_id": acme.pk})
    api.assert_error(response, 403, "forbidden")
    assert not ApprovalRequest.objects.exists()


def test_it_refuses_a_run_credential_on_the_public_routes(api: Api, carol: User,
                                                          acme: Project) -> None:
    run, raw = start_run(carol, acme)
    approval = pending(run)
    client = run_client(raw)
    decided = client.post(f"/api/v1/agent-approvals/{approval.pk}/decision",
                          {"decision": "approve"})
    api.assert_error(decided, 403, "forbidden")
    api.assert_error(client.post("/api/v1/agent-approvals", BODY), 403, "forbidden")
    api.assert_error(client.get("/api/v1/agent-approvals"), 403, "forbidden")
    assert ApprovalRequest.objects.get(pk=approval.pk).status == "pending"


@pytest.mark.urls("kionga.internal_urls")
def test_it_refuses_a_run_deciding_on_the_internal_listener(api: Api, carol: User,
                                                            acme: Project) -> None:
    run, raw = start_run(carol, acme)
    own = pending(run)
    response = run_client(raw).post(BASE + f"agent-approvals/{own.pk}/decision",
                                    {"decision": "approve"})
    api.assert_error(response, 403, "forbidden")
    assert ApprovalRequest.objects.get(pk=own.pk).status == "pending"
