"""Designs and their revisions. A revision's graph is stored as saved and never rewritten."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from kionga.models import Project


class Design(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="designs")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    # The latest revision number; a PUT claims the next one with a conditional UPDATE.
    revision = models.PositiveIntegerField(default=1)
    require_evaluation = models.BooleanField(default=False)
    # Staff switched the gate on (the admin site, or a staff user through the API): the
    # project's editors cannot switch it off, and only an evaluation judged by the
    # operator's model opens it (docs/decisions/staff-gates-need-the-operators-judge.md).
    require_evaluation_by_staff = models.BooleanField("gate set by staff", default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "id"]
        indexes = [models.Index(fields=["project", "-updated_at"], name="design_project_updated")]
        constraints = [
            # A staff gate is a gate.
            models.CheckConstraint(
                condition=models.Q(require_evaluation=True)
                | models.Q(require_evaluation_by_staff=False),
                name="design_staff_gate_is_on"),
        ]

    def __str__(self) -> str:
        return self.name

    def current(self) -> DesignRevision:
        return self.revisions.get(number=self.revision)


class DesignRevision(models.Model):
    design = models.ForeignKey(Design, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    # The document as saved: version 2 for every save through the API; older imports
    # may hold version 1 drafts, migrated on read.
    graph = models.JSONField()
    # The resource-free validation report of `graph` (designs.validation): the graph
    # never changes, so reads re-check only its resource IDs.
    validation = models.JSONField(null=True, blank=True, editable=False)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["design", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["design", "number"], name="revision_unique_number"),
        ]

    def __str__(self) -> str:
        return f"{self.design} r{self.number}"

    def summary(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "author": self.author.get_username() if self.author else None,
            "created_at": self.created_at.isoformat(),
        }


class Pin(models.Model):
    """A designer's pinned output of one node (designs/pins.py): design-time runs repeat
    it instead of running the node. Kept with the design, never in a revision's graph,
    so never in a behaviour hash or a published version."""

    design = models.ForeignKey(Design, on_delete=models.CASCADE, related_name="pins")
    node_id = models.CharField(max_length=64)
    port = models.CharField(max_length=64)
    value = models.JSONField()
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["design", "node_id"]
        constraints = [
            models.UniqueConstraint(fields=["design", "node_id"], name="pin_unique_node"),
        ]

    def __str__(self) -> str:
        return f"{self.design} {self.node_id}.{self.port}"

    def to_dict(self) -> dict[str, Any]:
        return {"node_id": self.node_id, "port": self.port, "value": self.value,
                "author": self.author.get_username() if self.author else None,
                "updated_at": self.updated_at.isoformat()}


class Version(models.Model):
    """A published version: an immutable artifact (contracts/schemas/artifact.v1).

    Rows are only ever inserted (designs.publish); nothing updates one. Numbers are
    1, 2, 3... per design, claimed under a lock on the design row, and a design never
    holds two versions with the same behaviour hash.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    design = models.ForeignKey(Design, on_delete=models.CASCADE, related_name="versions")
    # The design's project, kept on the row: version IDs are looked up per project
    # (validation of subflow/map/loop nodes, flow pickers).
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    number = models.PositiveIntegerField()
    content_sha256 = models.CharField(max_length=64)
    source_revision = models.PositiveIntegerField()
    notes = models.TextField(blank=True)
    artifact = models.JSONField()
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Set by the publish (the artifact's published_at is the same instant).
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["design", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["design", "number"], name="version_unique_number"),
            models.UniqueConstraint(fields=["design", "content_sha256"],
                                    name="version_unique_behaviour"),
        ]
        indexes = [models.Index(fields=["project", "-created_at"], name="version_project")]

    def __str__(self) -> str:
        return f"{self.design} v{self.number}"

    def summary(self) -> dict[str, Any]:
        """What flow pickers and version lists show: no graph."""
        return {
            "id": str(self.pk),
            "design_id": str(self.design_id),
            "project_id": self.project_id,
            "number": self.number,
            "content_sha256": self.content_sha256,
            "source_revision": self.source_revision,
            "notes": self.notes,
            "author": self.author.get_username() if self.author else None,
            "created_at": self.created_at.isoformat(),
        }
