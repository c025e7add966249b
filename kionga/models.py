"""Platform basics: projects (tenants), memberships with roles, API tokens, audit log."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q


class Role(models.TextChoices):
    # Ordered from least to most privileged; kionga.access ranks them.
    VIEWER = "viewer", "Viewer"
    EDITOR = "editor", "Editor"
    ADMIN = "admin", "Admin"


class Project(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.slug

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.pk,
            "slug": self.slug,
            "name": self.name,
            "created_at": self.created_at.isoformat(),
        }


class Membership(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="kionga_memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="membership_unique_user"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.project} ({self.role})"

    def to_dict(self) -> dict[str, Any]:
        return {"project": self.project.to_dict(), "role": self.role}


class ApiToken(models.Model):
    """A bearer token. Only its SHA-256 is stored: tokens are random, so a fast hash is safe."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    # First characters of the raw token: an indexed, non-secret lookup key.
    prefix = models.CharField(max_length=8, db_index=True)
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    # None: never expires. An expired token authenticates nobody.
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked = models.BooleanField(default=False)
    # The token whose request made this one (None: made by a signed-in person, the
    # admin or bootstrap). What ends or narrows a token ends or narrows the tokens made
    # from it (kionga.token_lineage); deleting it deletes them.
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE,
                               related_name="children")

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.pk,
            "name": self.name,
            "prefix": self.prefix,
            "created_at": self.created_at.isoformat(),
            "last_used_at": self.last_used_at.isoformat() if self.last_used_at else None,
            "expires_at": self.expires_at.isoformat() if self.expires_at else None,
            "revoked": self.revoked,
            "parent_id": self.parent_id,
        }


class TokenRevocation(models.Model):
    """A project admin took one token's access to their project away: the token still
    works elsewhere, but kionga.access treats its holder as no member of `project`."""

    token = models.ForeignKey(ApiToken, on_delete=models.CASCADE, related_name="revocations")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["token", "project"], name="token_revocation_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.token} revoked in {self.project}"


class TokenUse(models.Model):
    """A token reached this project: it authenticated a request that passed a check of
    the project's membership (kionga.token_use). What the project's admins may list of
    their members' tokens: only those used here (or revoked here), with the last use
    here. Written at most once a minute per token and project."""

    token = models.ForeignKey(ApiToken, on_delete=models.CASCADE, related_name="+")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+",
                                db_index=False)  # indexed by token_use_project
    last_used_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["token", "project"], name="token_use_unique"),
        ]
        indexes = [models.Index(fields=["project", "token"], name="token_use_project")]

    def __str__(self) -> str:
        return f"{self.token} used in {self.project}"


class Invitation(models.Model):
    """A project admin's offer of a role to a person, who becomes a member only by
    accepting it (kionga.projects.invitations). One is stored for whatever name or
    address the admin typed, whether or not it names anyone: the answer must not tell
    who has an account here."""

    class Status(models.TextChoices):
        PENDING = "pending"
        ACCEPTED = "accepted"
        DECLINED = "declined"
        REVOKED = "revoked"
        # Never stored: a pending invitation past expires_at reads as expired.
        EXPIRED = "expired"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invitations",
                                db_index=False)  # indexed by invitation_project
    # What the admin typed: a username as given, or an email address in lower case.
    address = models.CharField(max_length=254)
    # The active person the address named when it was sent; None: nobody (or an email
    # several people share), and then nobody can ever accept it.
    invitee = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                on_delete=models.CASCADE, related_name="kionga_invitations")
    role = models.CharField(max_length=16, choices=Role.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    invited_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # Inviting the same address again refreshes the pending invitation.
            models.UniqueConstraint(fields=["project", "address"],
                                    condition=Q(status="pending"),
                                    name="invitation_one_pending"),
        ]
        indexes = [
            models.Index(fields=["project", "-created_at"], name="invitation_project"),
        ]

    def __str__(self) -> str:
        return f"{self.address} to {self.project} as {self.role} ({self.status})"


class InvitedAccount(models.Model):
    """An account made for an invited email address nobody here had: inactive, with no
    usable password, until the person sets one through the invitation's one-time link
    (kionga.invitation_links) or signs in through the identity provider with that
    verified email. The row goes when the account becomes active."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, primary_key=True,
                                on_delete=models.CASCADE, related_name="invited_account")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.user} (invited, no password yet)"


class AuditEvent(models.Model):
    # Nullable links: audit rows outlive the users and projects they mention.
    project = models.ForeignKey(  # indexed by audit_project_created, which begins with it
        Project, null=True, blank=True, on_delete=models.SET_NULL, related_name="audit_events",
        db_index=False,
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    action = models.CharField(max_length=64)
    target_type = models.CharField(max_length=64, blank=True)
    target_id = models.CharField(max_length=64, blank=True)
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "created_at"], name="audit_project_created")]

    def __str__(self) -> str:
        return f"{self.action} {self.target_type}:{self.target_id}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.pk,
            "project_id": self.project_id,
            "actor": self.actor.get_username() if self.actor else None,
            "action": self.action,
            "target_type": self.target_type,
            "target_id": self.target_id,
            "details": self.details,
            "created_at": self.created_at.isoformat(),
        }


# Platform resources live in their own module; importing them here registers them.
from kionga.resource_models import (  # noqa: E402
    ApiConnection,
    Dataset,
    DatasetObject,
    Function,
    KnowledgeBase,
    KnowledgeDocument,
    ModelEndpoint,
)

__all__ = [
    "ApiConnection",
    "ApiToken",
    "AuditEvent",
    "Dataset",
    "DatasetObject",
    "Function",
    "Invitation",
    "KnowledgeBase",
    "KnowledgeDocument",
    "Membership",
    "ModelEndpoint",
    "Project",
    "Role",
    "TokenRevocation",
    "TokenUse",
]
