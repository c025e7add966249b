"""Opening a run's event stream with an API token: one query for everything it reads.

The same rules as kionga.tokens.find_user_by_token + runs.read.check_run_readable +
runs.sse.opening, which the events view used to run as four ORM queries: a live
token (its prefix, not revoked, not expired, its user active; the hash compared in
constant time), the run under that design, in a project where the token's user is a
member and which did not revoke this token (TokenRevocation), whether it ended, and
its stored events after Last-Event-ID. Unknown token: 401 invalid_token; a run the
caller may not read: 404, as before. The token's last use is recorded as
kionga.tokens.touch does (at most once a minute), and its use in the run's project as
kionga.access does (kionga.token_use). Session callers (the canvas) take
the ORM path in runs.views, and so does every caller on another database than
PostgreSQL (the SQLite demo).
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Final

from kionga import prepared_sql, token_use
from kionga.errors import not_found
from kionga.models import Membership, TokenRevocation
from runner.protocol import FINAL_STATUSES
from runs.hot import token
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


def open_with_token(raw: str, design_id: uuid.UUID, run_id: uuid.UUID,
                    after: int) -> tuple[int, str, Opening]:
    """(user ID, run ID, opening) for a bearer token, or 401/404 as the ORM path."""
    prefix = token.prefix_of(raw)
    rows = prepared_sql.fetch_all(_OPEN, {"prefix": prefix, "run": run_id, "design": design_id,
                                 "after": after})
    (token_id, _hash, user_id, last_used, found_run, project_id, status,
     events) = token.pick(rows, raw, 1)
    token.touch_token(token_id, last_used)
    if found_run is None:
        raise not_found("Run not found.")
    token_use.record(token_id, project_id)
    stored: list[dict[str, Any]] = [json.loads(e) for e in events]
    return int(user_id), str(found_run), (status in FINAL_STATUSES, stored)
