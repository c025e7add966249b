"""Runs, their stored events, run credentials and idempotency keys."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import models

from kionga.models import Project
from runner.protocol import ACTIVE_STATUSES, FINAL_STATUSES

__all__ = ["ACTIVE_STATUSES", "FINAL_STATUSES", "IdempotencyKey", "NodeRecord", "Run",
           "RunCredential", "RunEvent"]


class Run(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        WAITING = "waiting"
        COMPLETED = "completed"
        FAILED = "failed"
        CANCELLED = "cancelled"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # No index of their own for project, design and agent: the Meta indexes begin with
    # them and serve their lookups and cascades; a redundant index is written on every
    # run's insert and status update (status changes are never HOT updates).
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="runs",
                                db_index=False)
    design = models.ForeignKey(
        "designs.Design", null=True, blank=True, on_delete=models.CASCADE, related_name="runs",
        db_index=False,
    )
    version_id = models.CharField(max_length=64, blank=True)
    # Set on the turns a deployed agent served (runs/agent_turns.py): each turn is a run.
    agent = models.ForeignKey("deployments.Agent", null=True, blank=True,
                              on_delete=models.CASCADE, related_name="turns", db_index=False)
    # Reported by the agent runtime for its turns (the runtime's own clock).
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    revision = models.PositiveIntegerField(null=True, blank=True)
    content_sha256 = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    input = models.TextField(blank=True)
    session_id = models.CharField(max_length=200, blank=True)
    allow_side_effects = models.BooleanField(default=False)
    stop_after = models.CharField(max_length=64, blank=True)
    # A re-run (runs/replay.py): the run whose recorded outputs it repeats, and the node
    # it runs from.
    from_run = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="+", db_index=False)
    from_node = models.CharField(max_length=64, blank=True)
    # The resource IDs of the run's graph per kind (contracts.resources.graph_resources):
    # the only ones its credential may call. Empty: it may call none.
    resources = models.JSONField(default=dict, blank=True)
    output = models.TextField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True)
    tokens = models.PositiveBigIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["design", "-created_at"], name="run_design_created"),
            models.Index(fields=["status"], name="run_status"),
            models.Index(fields=["created_at"], name="run_created"),
            # Metrics (operations/metrics.py): index-only scans of an agent's turns and of
            # a project's last 24 hours.
            models.Index(fields=["agent", "created_at"], name="run_agent_created",
                         include=["status", "latency_ms", "tokens", "cost"],
                         condition=models.Q(agent__isnull=False)),
            models.Index(fields=["project", "created_at"], name="run_project_created",
                         include=["status", "latency_ms", "tokens", "cost", "started_at",
                                  "finished_at"]),
        ]

    def __str__(self) -> str:
        return f"run {self.pk} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_STATUSES

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": str(self.pk),
            "design_id": str(self.design_id) if self.design_id else None,
            "version_id": self.version_id or None,
            "revision": self.revision,
            "content_sha256": self.content_sha256,
            "status": self.status,
            "input": self.input,
            "output": self.output,
            "error": self.error,
            "usage": {"tokens": self.tokens, "cost": float(self.cost)},
            "allow_side_effects": self.allow_side_effects,
            "from_run": str(self.from_run_id) if self.from_run_id else None,
            "from_node": self.from_node or None,
            "created_at": self.created_at.isoformat(),
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
        }


class RunEvent(models.Model):
    """A stored run event (node.delta is never stored). Unique per (run, seq): exactly once."""

    # Indexed by the (run, seq) constraint, which begins with it.
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="events",
                            db_index=False)
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=32)
    data = models.JSONField()

    class Meta:
        ordering = ["run", "seq"]
        constraints = [models.UniqueConstraint(fields=["run", "seq"], name="run_event_unique_seq")]

    def __str__(self) -> str:
        return f"{self.run_id}#{self.seq} {self.type}"


class NodeRecord(models.Model):
    """One attempt of one node of a run, as the runner recorded it (runner/records.py):
    inputs, output and port, error, times, tokens and cost, redacted and bounded.
    Unique per (run, node, attempt): a redelivered entry is stored once. Goes with its
    run (pruning deletes runs; records cascade)."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="node_records",
                            db_index=False)
    node_id = models.CharField(max_length=64)
    attempt = models.PositiveIntegerField()
    status = models.CharField(max_length=16)
    tokens = models.PositiveBigIntegerField(default=0)
    duration_ms = models.PositiveIntegerField(default=0)
    data = models.JSONField()

    class Meta:
        ordering = ["run", "node_id", "attempt"]
        constraints = [models.UniqueConstraint(fields=["run", "node_id", "attempt"],
                                               name="node_record_unique_attempt")]

    def __str__(self) -> str:
        return f"{self.run_id} {self.node_id}#{self.attempt} {self.status}"


class RunCredential(models.Model):
    """The run-scoped credential: only its hash is stored; valid while the run is active."""

    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="credential")
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)


class IdempotencyKey(models.Model):
    """Idempotency-Key of a run start, scoped to project and caller, kept 24 h."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=200)
    request_hash = models.CharField(max_length=64)
    run = models.ForeignKey(Run, null=True, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "user", "key"], name="idempotency_unique")
        ]
