"""Deployed agents: one per design, pointing at one published version at a time.

An agent's rollout history is append-only (`Rollout`): version, settings, who, when.
Its runtime calls the gateway's internal listener with an `AgentCredential` (only the
hash is stored): the agent's project identity, never a person's token.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings as django_settings
from django.db import models

from designs.models import Design, Version
from kionga.models import Project


class Agent(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    # One agent per design: deploying another version of the design rolls it forward.
    design = models.OneToOneField(Design, on_delete=models.CASCADE, related_name="agent")
    # The Kubernetes name of its objects (DNS-1123, stable for the agent's life).
    name = models.CharField(max_length=63, unique=True)
    version = models.ForeignKey(Version, on_delete=models.PROTECT, related_name="+")
    # A canary (deployments/canary.py): this version serves canary_percent of the turns,
    # chosen per turn by the runtime; both null when none runs.
    canary_version = models.ForeignKey(Version, null=True, blank=True,
                                       on_delete=models.PROTECT, related_name="+")
    canary_percent = models.PositiveSmallIntegerField(null=True, blank=True)
    settings = models.JSONField(default=dict)
    created_by = models.ForeignKey(django_settings.AUTH_USER_MODEL, null=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]
        indexes = [models.Index(fields=["project", "-updated_at"], name="agent_project")]

    def __str__(self) -> str:
        return self.name

    def summary(self) -> dict[str, Any]:
        return {
            "id": str(self.pk),
            "name": self.name,
            "project_id": self.project_id,
            "design_id": str(self.design_id),
            "version_id": str(self.version_id),
            "version": self.version.number,
            "settings": self.settings,
            "canary": self.canary(),
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
        }

    def canary(self) -> dict[str, Any] | None:
        if self.canary_version is None:
            return None
        return {"version_id": str(self.canary_version_id),
                "version": self.canary_version.number,
                "content_sha256": self.canary_version.content_sha256,
                "percent": self.canary_percent}


class Rollout(models.Model):
    """One deploy of a version to an agent (inserted, never updated): a deploy, a
    rollback to the version the agent ran before (deployments/rollback.py), or a canary's
    start and promotion (deployments/canary.py; a canary's rollback is a `rollback` of
    the version the agent kept)."""

    class Action(models.TextChoices):
        DEPLOY = "deploy"
        ROLLBACK = "rollback"
        CANARY = "canary"
        PROMOTE = "promote"

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="rollouts")
    version = models.ForeignKey(Version, on_delete=models.PROTECT, related_name="rollouts")
    settings = models.JSONField(default=dict)
    action = models.CharField(max_length=16, choices=Action.choices, default=Action.DEPLOY)
    canary_percent = models.PositiveSmallIntegerField(null=True, blank=True)  # of a canary
    deployed_by = models.ForeignKey(django_settings.AUTH_USER_MODEL, null=True,
                                    on_delete=models.SET_NULL, related_name="+")
    deployed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["agent", "-deployed_at", "-id"]
        indexes = [models.Index(fields=["agent", "-deployed_at"], name="rollout_agent")]

    def __str__(self) -> str:
        return f"{self.agent} v{self.version.number}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "version_id": str(self.version_id),
            "version": self.version.number,
            "content_sha256": self.version.content_sha256,
            "action": self.action,
            "canary_percent": self.canary_percent,
            "settings": self.settings,
            "deployed_by": self.deployed_by.get_username() if self.deployed_by else None,
            "deployed_at": self.deployed_at.isoformat(),
        }


class AgentCredential(models.Model):
    """The deployed agent's identity on the internal listener (revocable in the admin)."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="credentials")
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"credential of {self.agent} ({'revoked' if self.revoked_at else 'live'})"


class AgentApiKey(models.Model):
    """A caller's key to one deployed agent (`kak_`; deployments.api_keys): only its hash
    is stored; revoked at once; its own rate (requests per minute) and expiry."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100)
    # The first characters of the key, to tell keys apart in lists (never enough to use).
    prefix = models.CharField(max_length=12)
    token_hash = models.CharField(max_length=64, unique=True)
    rate_per_minute = models.PositiveIntegerField(default=60)
    expires_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(django_settings.AUTH_USER_MODEL, null=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["agent", "-created_at"], name="agent_api_key_agent")]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": str(self.pk), "agent_id": str(self.agent_id), "name": self.name,
            "prefix": self.prefix, "rate_per_minute": self.rate_per_minute,
            "expires_at": self.expires_at.isoformat() if self.expires_at else None,
            "created_by": self.created_by.get_username() if self.created_by else None,
            "created_at": self.created_at.isoformat(),
            "revoked_at": self.revoked_at.isoformat() if self.revoked_at else None,
            "last_used_at": self.last_used_at.isoformat() if self.last_used_at else None,
        }
