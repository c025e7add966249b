"""What starts a deployed agent's turns besides its callers: signed webhooks and schedules.

A trigger belongs to one agent. A webhook trigger holds its signing secret (encrypted,
kionga.secret_fields; shown once when made); a schedule trigger holds a cron expression
and a time zone, and the django-celery-beat row that beat reads (`periodic_task`). Each
turn a trigger started is a `Firing`: the trigger, the turn (a Run with `agent` set) and
the delivery it answered — the sender's delivery ID for a webhook, the due time for a
schedule — unique per trigger, which is what makes a repeated delivery or a second
beat of the same due time start nothing.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings as django_settings
from django.db import models
from django_celery_beat.models import PeriodicTask

from deployments.models import Agent
from kionga.models import Project
from kionga.secret_fields import EncryptedTextField
from runs.models import Run


class Trigger(models.Model):
    class Kind(models.TextChoices):
        WEBHOOK = "webhook"
        SCHEDULE = "schedule"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # The agent's project, kept on the row: access checks and the secret's binding read it.
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="triggers")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    name = models.CharField(max_length=100)
    enabled = models.BooleanField(default=True)
    # Webhooks only: the HMAC-SHA256 key of their deliveries (triggers/webhooks.py).
    secret = EncryptedTextField(blank=True, default="", bound_to=("project_id", "id"))
    # Schedules only (triggers/schedules.py): five-field cron and an IANA time zone.
    cron = models.CharField(max_length=100, blank=True)
    timezone = models.CharField(max_length=64, blank=True)
    # The input of every turn the schedule starts (a webhook's turn gets the body).
    input = models.TextField(blank=True)
    periodic_task = models.OneToOneField(PeriodicTask, null=True, blank=True,
                                         on_delete=models.SET_NULL, related_name="+")
    created_by = models.ForeignKey(django_settings.AUTH_USER_MODEL, null=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["agent", "-created_at"], name="trigger_agent")]

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"

    def to_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "id": str(self.pk), "agent_id": str(self.agent_id), "kind": self.kind,
            "name": self.name, "enabled": self.enabled,
            "created_by": self.created_by.get_username() if self.created_by else None,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
        }
        if self.kind == self.Kind.SCHEDULE:
            found.update(cron=self.cron, timezone=self.timezone, input=self.input)
        else:
            found["path"] = f"/api/v1/hooks/{self.pk}"
        return found


class Firing(models.Model):
    """One turn a trigger started, and the delivery (or due time) it answered."""

    trigger = models.ForeignKey(Trigger, on_delete=models.CASCADE, related_name="firings")
    turn = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="firing")
    # A webhook's delivery ID as sent; a schedule's due time (ISO 8601, UTC).
    delivery_id = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["trigger", "delivery_id"],
                                               name="firing_once_per_delivery")]

    def __str__(self) -> str:
        return f"{self.trigger} {self.delivery_id}"

    def to_dict(self) -> dict[str, Any]:
        """The answer to the delivery, the same every time it is repeated."""
        return {"trigger_id": str(self.trigger_id), "delivery_id": self.delivery_id,
                "turn_id": str(self.turn_id)}
