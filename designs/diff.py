"""Comparing a design's revisions and versions, and restoring an old revision.

`GET /agent-designs/{id}/diff?from=A&to=B`: A and B each a revision number (`3`) or a
published version of the design (`v2`); the answer is contracts.graph_diff's (nodes, edges
and settings added, removed and changed; whether the behaviour hash changed).
`POST /agent-designs/{id}/revisions/{number}/restore {revision}`: that revision's graph
saved as the next revision (409 stale_revision as any save), audited.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from contracts.graph_diff import graph_diff
from contracts.normalize import NotNormalizable, normalize
from designs.actions import check_design_access, do_save_revision
from designs.models import Design, Version
from designs.validation import missing_revision
from kionga import audit
from kionga.access import AnyUser
from kionga.errors import APIError, invalid_field
from kionga.models import Role


def check_diff(user: AnyUser, design_id: uuid.UUID, raw_from: str | None,
               raw_to: str | None) -> dict[str, Any]:
    design = check_design_access(user, design_id)
    before = _graph(design, raw_from, "from")
    after = _graph(design, raw_to, "to")
    return {"design_id": str(design.pk), "from": raw_from, "to": raw_to,
            **graph_diff(before, after)}


def _graph(design: Design, raw: str | None, field: str) -> dict[str, Any]:
    """The normalized graph of a revision (`3`) or a version (`v2`) of the design."""
    text = (raw or "").strip()
    number = _number(text[1:] if text[:1] in ("v", "V") else text)
    if number is None:
        raise invalid_field(field, "A revision number (3) or a version (v2) is required.")
    if text[:1] in ("v", "V"):
        version = Version.objects.filter(design=design, number=number).first()
        if version is None:
            raise APIError(404, "not_found", f"Version {number} of this design does not exist.")
        graph: dict[str, Any] = version.artifact["graph"]
        return graph
    stored = design.revisions.filter(number=number).first()
    if stored is None:
        raise missing_revision(number)
    try:
        return normalize(stored.graph).graph
    except NotNormalizable as exc:
        raise APIError(422, "validation_failed", f"Revision {number} cannot be compared: "
                       f"{exc}.") from None


def _number(text: str) -> int | None:
    if not text.isdigit() or len(text) > 9:
        return None
    return int(text) if int(text) >= 1 else None


def do_restore_revision(user: User, design_id: uuid.UUID, number: int,
                        read_revision: int) -> Design:
    """Save revision `number`'s graph as the next revision (the design's editors)."""
    design = check_design_access(user, design_id, Role.EDITOR)
    stored = design.revisions.filter(number=number).first()
    if stored is None:
        raise missing_revision(number)
    with transaction.atomic():
        saved = do_save_revision(user, design, read_revision, copy.deepcopy(stored.graph),
                                 None, None)
        audit.record("design.revision_restored", project=design.project, actor=user,
                     target_type="design", target_id=design.pk,
                     details={"restored": number, "revision": saved.revision})
    return saved
