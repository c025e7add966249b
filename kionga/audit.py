"""One place that writes audit events, so every app records them the same way."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser, User

from kionga.models import AuditEvent, Project


def record(
    action: str,
    *,
    project: Project | None = None,
    actor: User | AnonymousUser | None = None,
    target_type: str = "",
    target_id: object = "",
    details: dict[str, Any] | None = None,
) -> AuditEvent:
    event = row(action, project=project, actor=actor, target_type=target_type,
                target_id=target_id, details=details)
    event.save(force_insert=True)
    return event


def row(
    action: str,
    *,
    project: Project | None = None,
    actor: User | AnonymousUser | None = None,
    target_type: str = "",
    target_id: object = "",
    details: dict[str, Any] | None = None,
) -> AuditEvent:
    """The event record() writes, not saved (for a caller writing it with its own rows)."""
    # Anonymous callers and system jobs (e.g. pruning) are stored as actor=None.
    real_actor = actor if isinstance(actor, User) else None
    return AuditEvent(
        project=project,
        actor=real_actor,
        action=action,
        target_type=target_type,
        target_id=str(target_id),
        details=details or {},
    )
