"""Approval requests for tests: a waiting run of a design and its pending request."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from approvals.models import ApprovalRequest
from kionga.models import Project
from runs.lifecycle import apply_event, do_finish_run
from runs.models import Run
from tests.designs_helpers import make_design


def waiting_run(user: User, project: Project) -> Run:
    return Run.objects.create(project=project, design=make_design(user, project), revision=1,
                              content_sha256="x" * 64, created_by=user, status="waiting")


def pending(run: Run, seconds: int = 60, node_id: str = "gate") -> ApprovalRequest:
    return ApprovalRequest.objects.create(
        project=run.project, run=run, node_id=node_id, message="Send it?",
        preview="refund 40 EUR", expires_at=timezone.now() + timedelta(seconds=seconds))


def end(run: Run, event: dict[str, Any]) -> None:
    """The run's terminal event, stored as the ingester stores it (the run ends)."""
    with transaction.atomic():
        run.save(update_fields=apply_event(run, event))
        do_finish_run(run)


def gated_graph(timeout_seconds: str) -> dict[str, Any]:
    """input → gate; approved → "sent: …", rejected → "held: <comment or reason>"."""
    return {
        "schema_version": 2,
        "nodes": [
            {"id": "input", "kind": "input"},
            {"id": "gate", "kind": "approval",
             "config": {"message": "Send {input}?", "timeout_seconds": timeout_seconds}},
            {"id": "sent", "kind": "prompt", "config": {"template": "sent: {input}"}},
            {"id": "held", "kind": "prompt", "config": {"template": "held: {input}"}},
            {"id": "output", "kind": "output"},
        ],
        "edges": [
            {"from": "input", "to": "gate"},
            {"from": "gate", "to": "sent", "from_port": "approved"},
            {"from": "gate", "to": "held", "from_port": "rejected"},
            {"from": "sent", "to": "output"}, {"from": "held", "to": "output"},
        ],
        "settings": {"timeout_seconds": 300},
    }
