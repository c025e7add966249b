"""Fuzz the API routes from our own OpenAPI document: no request may produce a 5xx, and
every invalid_request names its fields."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import schemathesis
from django.test import Client
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from approvals.models import ApprovalRequest
from evaluations.models import Evaluation
from runs.models import Run
from tests.designs_helpers import make_design
from tests.fuzz_kit import send_and_check
from tests.openapi_check import openapi_document

OPERATIONS = [
    ("/api/v1/agent-designs/validate", "POST"),
    ("/api/v1/agent-designs/{design_id}/validate", "POST"),
    ("/api/v1/agent-designs", "POST"),
    ("/api/v1/agent-designs", "GET"),
    ("/api/v1/agent-designs/{design_id}", "PUT"),
    ("/api/v1/agent-designs/{design_id}/runs", "POST"),
    ("/api/v1/agent-designs/{design_id}/runs", "GET"),
    ("/api/v1/agent-designs/{design_id}/runs/{run_id}", "GET"),
    ("/api/v1/agent-designs/{design_id}/runs/{run_id}/events", "GET"),
    ("/api/v1/agent-designs/{design_id}/runs/{run_id}/cancel", "POST"),
    ("/api/v1/agent-approvals/{approval_id}/decision", "POST"),
    ("/api/v1/agent-approvals", "GET"),
    ("/api/v1/agent-approvals", "POST"),
    ("/api/v1/agent-designs/{design_id}/evaluations", "POST"),
    ("/api/v1/agent-evaluations/{evaluation_id}/cases/{case_id}/review", "POST"),
]


@pytest.mark.parametrize(("path", "method"), OPERATIONS)
def test_it_never_answers_5xx(api: Any, alice: Any, acme: Any, path: str, method: str,
                              runner_configured: Any, rds: Any) -> None:
    schema = schemathesis.openapi.from_dict(openapi_document("kionga.urls"))
    operation = schema[path][method]
    design = make_design(alice, acme)
    design_id = str(design.pk)
    run = Run.objects.create(project=acme, design=design, revision=1, content_sha256="x" * 64,
                             created_by=alice)
    approval = ApprovalRequest.objects.create(project=acme, run=run, node_id="gate",
                                              expires_at=timezone.now() + timedelta(minutes=5))
    evaluation = Evaluation.objects.create(project=acme, design=design, revision=1,
                                           content_sha256="x" * 64, created_by=alice)
    evaluation.cases.create(position=0, case_id="c0", name="c0", case={}, status="passed")
    real = {"design_id": design_id, "run_id": str(run.pk), "approval_id": str(approval.pk),
            "evaluation_id": str(evaluation.pk), "case_id": "c0"}
    token = api.token_for(alice)
    client = Client()

    @settings(max_examples=120, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(case=operation.as_strategy(), use_real_ids=st.booleans(), raw=st.booleans())
    def check(case: Any, use_real_ids: bool, raw: bool) -> None:
        params = dict(case.path_parameters or {})
        if use_real_ids:
            params.update({k: v for k, v in real.items() if k in params})
        send_and_check(client, method, path, case, params, token, raw)

    check()

