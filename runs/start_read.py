"""What a run start reads, in one prepared query: the design, the caller's role in its
project and the revision to run (the latest when the body names none).

The rules of designs.actions.check_design_access (editor role; 404 for a non-member
or a project the caller's token may not reach, 403 for a viewer; a token's use
recorded as kionga.access records it) and designs.validation.check_runnable_revision
(404 for a missing revision, 422 for one with errors, a resource the graph names and
the project lacks included: designs.resource_check's SQL, asked about the references
of the revision's stored validation), applied to that one row. The
rows become unsaved model instances, so runs.start.start_target is the one
implementation of the start itself.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any, Final

from django.contrib.auth.models import User

from contracts.pins import pinned_reuse
from designs.models import Design, DesignRevision, Pin
from designs.resource_check import existing_refs_sql, known_refs
from designs.validation import check_runnable, missing_revision
from kionga import prepared_sql, token_use
from kionga.access import check_role
from kionga.models import Membership, Project, Role
from kionga.token_scope import blocked_projects
from runs import dispatch
from runs.start import Target

_READ: Final = f"""
SELECT d.id, d.project_id, d.revision, m.role, v.id, v.number, v.graph::text,
       v.validation::text,
       (SELECT json_object_agg(p.node_id, json_build_object('port', p.port, 'value', p.value))
        FROM {Pin._meta.db_table} p WHERE p.design_id = d.id)::text,
       {existing_refs_sql("d.project_id", "v.validation->'resource_refs'")}
FROM {Design._meta.db_table} d
LEFT JOIN {Membership._meta.db_table} m
  ON m.project_id = d.project_id AND m.user_id = %(user)s
  AND NOT (d.project_id = ANY(%(blocked)s::bigint[]))
LEFT JOIN {DesignRevision._meta.db_table} v
  ON v.design_id = d.id AND v.number = COALESCE(%(revision)s::integer, d.revision)
WHERE d.id = %(design)s
"""

MISSING: Final = "Design not found."


@dataclass(frozen=True)
class StartRead:
    """The row read for a start; check_design() and check_target() apply its rules."""

    user: User
    design_id: uuid.UUID
    revision: int | None
    row: tuple[Any, ...]

    def check_design(self) -> Design:
        """The design if the caller is one of its project's editors: 404 / 403."""
        design_id, project_id, latest, role = self.row[:4]
        if role is not None:
            token_use.note(self.user, project_id)
        check_role(role, Role.EDITOR, MISSING)
        return prepared_sql.new_row(Design, id=design_id,
                                    project=prepared_sql.new_row(Project, id=project_id),
                                    revision=latest)

    def check_target(self, design: Design) -> Target:
        """The revision to run: runner configured (503), it exists (404), it runs (422)."""
        dispatch.check_runner_configured()
        revision_id, number, graph, validation, pins, existing = self.row[4:]
        if revision_id is None:
            raise missing_revision(self.revision or design.revision)
        stored = DesignRevision(pk=revision_id, design=design, number=number,
                                graph=json.loads(graph),
                                validation=None if validation is None else json.loads(validation))
        report = check_runnable(stored, design.project, known_refs(existing))
        assert report.graph is not None and report.content_sha256 is not None
        # The design's pins (designs.pins), read in the same query: a design run's only.
        return Target(design, number, report.graph, report.content_sha256,
                      pins=pinned_reuse(report.graph, json.loads(pins) if pins else {}))


def read_start(user: User, design_id: uuid.UUID, revision: int | None) -> StartRead:
    """The one read of a start (`revision`: the body's, None for the latest)."""
    # A number past PostgreSQL's integers names no revision: 404 as any other missing one.
    wanted = revision if revision is None or 1 <= revision <= MAX_REVISION else 0
    rows = prepared_sql.fetch_all(_READ, {"user": user.pk, "design": design_id,
                                          "revision": wanted,
                                          "blocked": sorted(blocked_projects(user))})
    row = rows[0] if rows else (None,) * 10
    return StartRead(user, design_id, revision, row)


# Revision numbers are PostgreSQL integers.
MAX_REVISION: Final = 2**31 - 1
