"""Approval requests: an agent run (or, later, a deployed agent) asks a person to decide."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import models

from kionga.models import Project


class ApprovalRequest(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending"
        APPROVED = "approved"
        REJECTED = "rejected"
        EXPIRED = "expired"
        CANCELLED = "cancelled"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    # Null for requests of deployed agents, which have no Run row.
    run = models.ForeignKey(
        "runs.Run", null=True, blank=True, on_delete=models.CASCADE, related_name="approvals"
    )
    node_id = models.CharField(max_length=200)
    message = models.TextField()
    preview = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    comment = models.TextField(blank=True)
    # Why it ended, in words (approvals.reasons); empty while pending.
    reason = models.TextField(blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["project", "status", "-created_at"], name="approval_project"),
            models.Index(fields=["run", "status"], name="approval_run_status"),
        ]

    def __str__(self) -> str:
        return f"approval {self.pk} ({self.status})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": str(self.pk),
            "project_id": self.project_id,
            "run_id": str(self.run_id) if self.run_id else None,
            "node_id": self.node_id,
            "message": self.message,
            "preview": self.preview,
            "status": self.status,
            # null until someone wrote one: the runner reads "" and null alike.
            "comment": self.comment or None,
            "reason": self.reason or None,
            "decided_by": self.decided_by.get_username() if self.decided_by else None,
            "decided_at": self.decided_at.isoformat() if self.decided_at else None,
            "expires_at": self.expires_at.isoformat(),
            "created_at": self.created_at.isoformat(),
        }
