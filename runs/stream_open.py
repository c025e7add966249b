"""Opening a run's event stream: the run and its stored events in one read.

After the API's own authentication and throttles (kionga.api_request), one prepared
query reads the design in a project where the caller is a member and which the
caller's token may reach (kionga.token_scope's blocked projects, as kionga.access
leaves them out), the run under it, whether it ended, and its stored events after
Last-Event-ID: the rules and answers of runs.read.check_run_access + runs.sse.opening
(404 "Design not found." / "Run not found.", as the route's JSON pages answer). A
token's use in the run's project is recorded as kionga.access records it
(kionga.token_use).

An open stream asks the same read again now and then (runs.stream_access) with
`after` RECHECK: the access alone, no event read.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Final

from django.contrib.auth.models import User

from designs.models import Design
from kionga import prepared_sql, token_use
from kionga.errors import not_found
from kionga.models import Membership
from kionga.token_scope import blocked_projects
from runner.protocol import FINAL_STATUSES
from runs.models import Run, RunEvent
from runs.sse import Opening

_OPEN: Final = f"""
SELECT r.id, d.project_id, r.status,
       ARRAY(SELECT e.data::text FROM {RunEvent._meta.db_table} e
             WHERE e.run_id = r.id AND e.seq > %(after)s ORDER BY e.seq)
FROM {Design._meta.db_table} d
JOIN {Membership._meta.db_table} m
  ON m.project_id = d.project_id AND m.user_id = %(user)s
  AND NOT (d.project_id = ANY(%(blocked)s::bigint[]))
LEFT JOIN {Run._meta.db_table} r ON r.id = %(run)s AND r.design_id = d.id
WHERE d.id = %(design)s
"""

# `after` of an open stream's re-check: NULL, which no seq is greater than.
RECHECK: Final = None


def open_run(user: User, design_id: uuid.UUID, run_id: uuid.UUID,
             after: int | None) -> tuple[str, Opening]:
    """(run ID, opening) of a run `user` may read, or 404; `after` RECHECK: the access
    check of an open stream (no events)."""
    rows = prepared_sql.fetch_all(_OPEN, {
        "run": run_id, "design": design_id, "user": user.pk, "after": after,
        "blocked": sorted(blocked_projects(user))})
    if not rows:  # as runs.read.check_run_access answers
        raise not_found("Design not found.")
    found_run, project_id, status, events = rows[0]
    token_use.note(user, project_id)
    if found_run is None:
        raise not_found("Run not found.")
    stored: list[dict[str, Any]] = [json.loads(e) for e in events]
    return str(found_run), (status in FINAL_STATUSES, stored)
