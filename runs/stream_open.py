"""Opening a run's event stream with an API token: one query for everything it reads.

The same rules as kionga.tokens.find_user_by_token + runs.read.check_run_readable +
runs.sse.opening, which the events view used to run as four ORM queries: a live
token (its prefix, not revoked, not expired, its user active; the hash compared in
constant time), the run under that design, in a project where the token's user is a
member and which did not revoke this token (TokenRevocation), whether it ended, and
its stored events after Last-Event-ID. Unknown token: 401 invalid_token; a run the
caller may not read: 404, as before. The token's last use is recorded as
kionga.tokens.touch does (at most once a minute), its use in the run's project as
kionga.access does (kionga.token_use), and the opening is counted by the API's
throttles (429 throttled), after the token and before the run, where DRF counts them.
Session callers (the canvas) take the ORM path in runs.views.

An open stream asks the same query again now and then (runs.stream_access) with
`after` RECHECK: the access alone, no event read and no request counted.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Final

from django.contrib.auth.models import User

from kionga import prepared_sql, token_use
from kionga.errors import not_found
from kionga.models import Membership, TokenRevocation
from runner.protocol import FINAL_STATUSES
from runs.hot import token
from runs.hot.start import check_throttles
from runs.models import Run, RunEvent
from runs.sse import Opening

_OPEN: Final = f"""
SELECT t.id, t.token_hash, t.user_id, t.last_used_at, r.id, r.project_id, r.status,
       ARRAY(SELECT e.data::text FROM {RunEvent._meta.db_table} e
             WHERE e.run_id = r.id AND e.seq > %(after)s ORDER BY e.seq)
FROM {token.TOKEN_SQL}
LEFT JOIN {Run._meta.db_table} r
  ON r.id = %(run)s AND r.design_id = %(design)s
  AND EXISTS (SELECT 1 FROM {Membership._meta.db_table} m
              WHERE m.project_id = r.project_id AND m.user_id = t.user_id)
  AND NOT EXISTS (SELECT 1 FROM {TokenRevocation._meta.db_table} v
                  WHERE v.token_id = t.id AND v.project_id = r.project_id)
WHERE {token.TOKEN_WHERE}
"""

# `after` of an open stream's re-check: NULL, which no seq is greater than.
RECHECK: Final = None


def open_with_token(raw: str, design_id: uuid.UUID, run_id: uuid.UUID,
                    after: int | None) -> tuple[int, str, Opening]:
    """(user ID, run ID, opening) for a bearer token, or 401/429/404 as the ORM path;
    `after` RECHECK: the access check of an open stream (no events, nothing counted)."""
    prefix = token.prefix_of(raw)
    rows = prepared_sql.fetch_all(_OPEN, {"prefix": prefix, "run": run_id, "design": design_id,
                                 "after": after})
    (token_id, _hash, user_id, last_used, found_run, project_id, status,
     events) = token.pick(rows, raw, 1)
    token.touch_token(token_id, last_used)
    if after is not RECHECK:
        check_throttles(User(pk=user_id))
    if found_run is None:
        raise not_found("Run not found.")
    token_use.record(token_id, project_id)
    stored: list[dict[str, Any]] = [json.loads(e) for e in events]
    return int(user_id), str(found_run), (status in FINAL_STATUSES, stored)
