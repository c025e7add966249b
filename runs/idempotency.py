"""Idempotency-Key for run starts, as payment APIs do them.

Scoped to project and caller and kept 24 h: the same key and body give the first
answer (the same run); another body is 422 `idempotency_mismatch`; while the first
request is still being created, 409 `idempotency_in_progress`. A start that fails
frees its key, so the client can retry with it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from kionga.errors import APIError, invalid_field
from kionga.models import Project
from runs.models import IdempotencyKey, Run

KEEP = timedelta(hours=24)
MAX_KEY_CHARS = 200


def check_key(raw: str | None) -> str | None:
    if raw is None:
        return None
    if not raw.strip() or len(raw) > MAX_KEY_CHARS:
        raise invalid_field("Idempotency-Key", f"Must be 1 to {MAX_KEY_CHARS} characters.")
    return raw


def start_once(project: Project, user: User, key: str | None, fingerprint: str,
               start: Callable[[], Run]) -> tuple[Run, bool]:
    """Run `start` once per key; returns (run, replayed)."""
    if key is None:
        return start(), False
    IdempotencyKey.objects.filter(project=project, user=user, key=key,
                                  created_at__lt=timezone.now() - KEEP).delete()
    try:
        with transaction.atomic():
            claim = IdempotencyKey.objects.create(project=project, user=user, key=key,
                                                  request_hash=fingerprint)
    except IntegrityError:
        return _replay(project, user, key, fingerprint), True
    try:
        run = start()
    except BaseException:
        claim.delete()
        raise
    IdempotencyKey.objects.filter(pk=claim.pk).update(run=run)
    return run, False


def _replay(project: Project, user: User, key: str, fingerprint: str) -> Run:
    first = IdempotencyKey.objects.filter(project=project, user=user, key=key).first()
    if first is None:  # freed by a failed first attempt a moment ago
        raise APIError(409, "idempotency_in_progress", "Retry this request.")
    if first.request_hash != fingerprint:
        raise APIError(422, "idempotency_mismatch",
                       "This Idempotency-Key was used with another request body.")
    if first.run_id is None:
        raise APIError(409, "idempotency_in_progress",
                       "The first request with this Idempotency-Key is still being processed.")
    return Run.objects.get(pk=first.run_id)
