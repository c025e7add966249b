"""Design actions: `check_*` validate and authorize, `do_*` write. Views call one of these."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.exceptions import ParseError
from rest_framework.request import Request

from contracts.issues import Issue, error
from contracts.registry import CEILINGS
from contracts.validate import Report, check_document_shape, validate_graph
from designs.gate_setting import Gate, gate_after, is_staff, record_gate_change
from designs.models import Design, DesignRevision
from designs.resource_check import ProjectResources
from designs.validation import revision_report
from kionga.access import (
    AnyUser,
    check_project_access,
    check_row_access,
    projects_of,
)
from kionga.errors import APIError, invalid_field
from kionga.models import Project, Role
from kionga.notices import send_notice

EMPTY_GRAPH: dict[str, Any] = {
    "schema_version": 2,
    "nodes": [
        {"id": "input", "kind": "input", "name": "Input", "x": 40, "y": 160},
        {"id": "output", "kind": "output", "name": "Output", "x": 300, "y": 160},
    ],
    "edges": [{"from": "input", "to": "output", "from_port": "out", "to_port": "in"}],
    "settings": {"max_steps": 50, "timeout_seconds": 60, "max_tokens": 50000},
}


def invalid_document(issues: list[Issue]) -> APIError:
    """A 400 in the issue shape: the body is not a graph document at all."""
    message = issues[0].message if issues else "The body is not a graph document."
    return APIError(400, "invalid_document", message, {"issues": [i.to_dict() for i in issues]})


def graph_body(request: Request) -> Any:
    """The parsed body of a validate route. A body the JSON parser refuses — not JSON at
    all, or JSON the platform cannot hold (kionga.parsers: nesting past the limit, a
    lone surrogate, a non-finite number, NUL) — is 400 invalid_document in the issue
    shape, the parser's message saying which (the spec: like any other body that is no
    graph document)."""
    try:
        return request.data
    except ParseError as exc:
        raise invalid_document([error("invalid_document", str(exc.detail))]) from None


def check_graph_document(doc: Any) -> dict[str, Any]:
    """The document if it is an object with nodes/edges arrays, else 400 invalid_document."""
    issues = check_document_shape(doc)
    if issues:
        raise invalid_document(issues)
    assert isinstance(doc, dict)
    check_ceilings(doc)
    return doc


def check_ceilings(doc: dict[str, Any]) -> None:
    """413 for a document past the hard ceilings, before any validation work.

    Drafts past LIMITS (100 nodes...) are saved with issues, as the spec asks; past
    CEILINGS they are not drafts but load, and every later read would pay for them.
    """
    for part, ceiling in (("nodes", CEILINGS["max_draft_nodes"]),
                          ("edges", CEILINGS["max_draft_edges"])):
        if len(doc[part]) > ceiling:
            raise APIError(413, "payload_too_large",
                           f"A graph document may have at most {ceiling} {part}; "
                           f"this one has {len(doc[part])}.", {"field": part})


def check_design_access(user: AnyUser, design_id: uuid.UUID,
                        min_role: str = Role.VIEWER) -> Design:
    """The design if the caller may see it (404 otherwise, whatever the reason)."""
    return check_row_access(Design.objects.select_related("project"), design_id, user,
                            min_role, "Design not found.")


def graph_report(doc: Any, project: Project | None) -> Report:
    resources = ProjectResources(project) if project is not None else None
    return validate_graph(doc, resources)


def design_list(user: AnyUser, project_id: Any = None) -> list[Design]:
    designs = Design.objects.filter(project__in=projects_of(user))
    if project_id is not None:
        designs = designs.filter(project=check_project_access(user, project_id))
    return list(designs.select_related("project")[:500])


def do_create_design(
    user: User, project: Project, name: str, description: str, graph: dict[str, Any],
    require_evaluation: bool = False,
) -> Design:
    gate = gate_after(Gate(False, False), require_evaluation, is_staff(user))
    with transaction.atomic():
        design = Design.objects.create(
            project=project, name=name, description=description, created_by=user, revision=1,
            require_evaluation=gate.on, require_evaluation_by_staff=gate.by_staff,
        )
        DesignRevision.objects.create(
            design=design, number=1, graph=graph_to_store(graph), author=user
        )
        record_gate_change(user, design, Gate(False, False), gate)
    return design


@dataclass(frozen=True)
class DesignChange:
    """A PUT of a design: a graph saves the next revision; the design's own fields (name,
    description, require_evaluation) change with it, or alone without a new revision
    (docs/decisions/require-evaluation-is-a-design-setting.md). None: unchanged."""

    read_revision: int
    graph: dict[str, Any] | None = None
    name: str | None = None
    description: str | None = None
    require_evaluation: bool | None = None

    def fields(self) -> dict[str, Any]:
        """The design row's columns this change sets (require_evaluation apart: audited)."""
        return {k: v for k, v in (("name", self.name), ("description", self.description))
                if v is not None}


def do_change_design(user: User, design: Design, change: DesignChange) -> Design:
    """Save a PUT: the next revision when it carries a graph, else the design's fields
    only (400 when it changes nothing); 409 stale_revision when `read_revision` is old."""
    if change.graph is not None:
        return do_save_revision(user, design, change.read_revision, change.graph, change.name,
                                change.description, change.require_evaluation)
    if not change.fields() and change.require_evaluation is None:
        raise invalid_field("graph", "Send a graph (the next revision), or at least one of "
                            "name, description, require_evaluation to change.")
    with transaction.atomic():
        locked = Design.objects.select_for_update().filter(pk=design.pk).first()
        if locked is None or locked.revision != change.read_revision:
            raise _stale(design)
        Design.objects.filter(pk=design.pk).update(**change.fields(), updated_at=timezone.now())
        _set_require_evaluation(user, locked, change.require_evaluation)
    design.refresh_from_db()
    return design


def do_save_revision(
    user: User,
    design: Design,
    read_revision: int,
    graph: dict[str, Any],
    name: str | None,
    description: str | None,
    require_evaluation: bool | None = None,
) -> Design:
    """Store the next revision if `read_revision` is still the latest; else 409.

    The conditional UPDATE is the claim: of two PUTs of the same revision, the
    second finds no row at that revision (PostgreSQL re-checks the WHERE after
    the first commits), so it cannot win too.
    """
    changes: dict[str, Any] = {"revision": read_revision + 1}
    if name is not None:
        changes["name"] = name
    if description is not None:
        changes["description"] = description
    try:
        with transaction.atomic():
            claimed = Design.objects.filter(pk=design.pk, revision=read_revision).update(
                **changes, updated_at=timezone.now()
            )
            if claimed != 1:
                raise _stale(design)
            DesignRevision.objects.create(
                design=design, number=read_revision + 1, graph=graph_to_store(graph), author=user
            )
            # The UPDATE above holds the row's lock until the commit.
            _set_require_evaluation(user, Design.objects.get(pk=design.pk), require_evaluation)
    except IntegrityError:
        raise _stale(design) from None
    send_notice(design.project_id, "revision.saved", design_id=design.pk,
                revision=read_revision + 1, by=user.get_username(), by_user_id=user.pk)
    design.refresh_from_db()
    return design


def _set_require_evaluation(user: User, locked: Design, value: bool | None) -> None:
    """Change the publish gate's setting of a design whose row the caller has locked
    (designs.gate_setting: 403 staff_gate when a project editor would switch off a gate
    staff set); a change is audited (who turned the gate on or off)."""
    if value is None:
        return
    before = Gate.of(locked)
    after = gate_after(before, value, is_staff(user))
    if after == before:
        return
    Design.objects.filter(pk=locked.pk).update(require_evaluation=after.on,
                                               require_evaluation_by_staff=after.by_staff)
    record_gate_change(user, locked, before, after)


def graph_to_store(doc: dict[str, Any]) -> dict[str, Any]:
    """What a save stores: the normalized version 2 document when it normalizes.

    So the next save of a migrated version 1 draft stores version 2. A draft too
    malformed to normalize is kept as sent (drafts are work in progress).
    """
    report = validate_graph(doc, None)
    return report.graph if report.graph is not None else doc


def design_dict(design: Design, *, with_graph: bool = True) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "id": str(design.pk),
        "project_id": design.project_id,
        "name": design.name,
        "description": design.description,
        "revision": design.revision,
        "require_evaluation": design.require_evaluation,
        "require_evaluation_by_staff": design.require_evaluation_by_staff,
        "created_at": design.created_at.isoformat(),
        "updated_at": design.updated_at.isoformat(),
    }
    if with_graph:
        revision = design.current()
        report = revision_report(revision, design.project)
        doc["graph"] = report.graph if report.graph is not None else revision.graph
        doc["validation"] = {
            "runnable": report.runnable,
            "issues": [i.to_dict() for i in report.issues],
            "content_sha256": report.content_sha256,
        }
        doc["revisions"] = [r.summary() for r in design.revisions.all()[:20]]
    return doc


def _stale(design: Design) -> APIError:
    latest = Design.objects.filter(pk=design.pk).values_list("revision", flat=True).first()
    return APIError(
        409,
        "stale_revision",
        "The design changed since you read it; reload it and apply your change again.",
        {"current_revision": latest},
    )
