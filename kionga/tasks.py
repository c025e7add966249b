"""Celery tasks of the platform, run by the gateway's worker (the Procfile's ``beat``)."""

from __future__ import annotations

import uuid

from celery import shared_task

from kionga.invitation_mail import do_deliver
from kionga.projects.invitations import DELIVER_INVITATION


@shared_task(name=DELIVER_INVITATION)
def deliver_invitation(invitation_id: str) -> str:
    """Email a stored invitation (kionga.invitation_mail); sent on its commit."""
    return do_deliver(uuid.UUID(invitation_id))
