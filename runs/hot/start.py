"""Starting a run with a bearer token: every read in one prepared query.

The same rules, in the same order, as the runs view's DRF path (runs.views.runs):
the token as kionga.tokens.find_token (401 invalid_token), the API throttles
(kionga.throttles, 429 throttled), the design as designs.actions.check_design_access
with the editor role (404 for a non-member or a project that revoked this token, 403
for a viewer; a member's token is recorded as used in the project, as kionga.access
records it: kionga.token_use), then runs.start: runner configured (503), the
revision's cached validation (designs.validation.check_runnable: 404 / 422) and
runs.start.start_target itself (stop_after, subflows, quota, the one-statement writes,
the task), with the design's pins (designs.pins, read in the same query). The rows
read here become unsaved model instances, so start_target is the one implementation.
The throttles are counted in the slot's own Redis script (runs.quota.take_slot), one
round trip for both; a start refused before it counts them on their own first, so
the answer is 429 throttled wherever DRF's would be.
"""

from __future__ import annotations

import json
import uuid
from types import SimpleNamespace
from typing import Any, Final

from django.contrib.auth.models import User
from rest_framework import exceptions
from rest_framework.views import APIView

from contracts.pins import pinned_reuse
from designs.models import Design, DesignRevision, Pin
from designs.validation import check_runnable, missing_revision
from kionga import prepared_sql, token_use
from kionga.access import check_role
from kionga.models import Membership, Project, Role, TokenRevocation
from kionga.throttles import WindowThrottle, refusal
from runs import dispatch
from runs.hot import token
from runs.models import Run
from runs.quota import ThrottleCount
from runs.start import StartRequest, Target, start_target
from runs.stream_limits import BUDGET, Release

_READ: Final = f"""
SELECT t.id, t.token_hash, t.user_id, t.last_used_at, u.username,
       d.id, d.project_id, d.revision, m.role, v.id, v.number, v.graph::text,
       v.validation::text,
       (SELECT json_object_agg(p.node_id, json_build_object('port', p.port, 'value', p.value))
        FROM {Pin._meta.db_table} p WHERE p.design_id = d.id)::text
FROM {token.TOKEN_SQL}
LEFT JOIN {Design._meta.db_table} d ON d.id = %(design)s
LEFT JOIN {Membership._meta.db_table} m
  ON m.project_id = d.project_id AND m.user_id = t.user_id
  AND NOT EXISTS (SELECT 1 FROM {TokenRevocation._meta.db_table} x
                  WHERE x.token_id = t.id AND x.project_id = d.project_id)
LEFT JOIN {DesignRevision._meta.db_table} v
  ON v.design_id = d.id AND v.number = COALESCE(%(revision)s::integer, d.revision)
WHERE {token.TOKEN_WHERE}
"""

MISSING: Final = "Design not found."


def start_with_token(raw: str, design_id: uuid.UUID, request: StartRequest,
                     streaming: bool) -> tuple[Run, Release | None]:
    """The started run, or the APIError the DRF path would answer. `streaming`: the
    answer is the run's stream, whose place in the stream budget is taken before the
    run starts (runs.start_stream), and returned for the stream to give back."""
    rows = prepared_sql.fetch_all(_READ, {"prefix": token.prefix_of(raw), "design": design_id,
                                          "revision": request.revision})
    row = token.pick(rows, raw, 1)
    (token_id, _hash, user_id, last_used, username, found_design, project_id, latest, role,
     revision_id, number, graph, validation, pins) = row
    token.touch_token(token_id, last_used)
    user = User(pk=user_id, username=username)
    counting = throttle_count(user)
    try:
        if role is not None:  # a member, as kionga.access would record it
            token_use.record(token_id, project_id)
        check_role(role, Role.EDITOR, MISSING)  # a missing design has no role: 404
        dispatch.check_runner_configured()
        project = Project(pk=project_id)
        design = Design(pk=found_design, project=project, revision=latest)
        if revision_id is None:
            raise missing_revision(request.revision or latest)
        stored = DesignRevision(pk=revision_id, design=design, number=number,
                                graph=json.loads(graph), validation=_json(validation))
        report = check_runnable(stored, project)
        assert report.graph is not None and report.content_sha256 is not None
        target = Target(design, number, report.graph, report.content_sha256,
                        pins=pinned_reuse(report.graph, _json(pins) or {}))
        release = BUDGET.open(user.pk) if streaming else None  # 429/503 before anything starts
        try:
            return start_target(user, target, request, counting), release
        except BaseException:
            if release is not None:
                release()
            raise
    except exceptions.APIException:
        if not counting.done:  # DRF counts (and may refuse) them before any other check
            check_throttles(user)
        raise


def throttle_count(user: User) -> ThrottleCount:
    """The API's throttles (REST_FRAMEWORK's DEFAULT_THROTTLE_CLASSES) for the
    admission script to count with the slot (runs.quota); a throttle of another kind
    is applied here and now, as DRF's APIView.check_throttles would."""
    caller: Any = SimpleNamespace(user=user)
    view = APIView()
    throttles = view.get_throttles()
    if not all(isinstance(t, WindowThrottle) for t in throttles):
        check_throttles(user)
        return ThrottleCount(done=True)
    windows = [(t, w) for t in throttles if isinstance(t, WindowThrottle)
               and (w := t.window(caller)) is not None]
    return ThrottleCount(windows)


def check_throttles(user: User) -> None:
    """The API's throttles, as DRF's APIView.check_throttles applies them: 429 throttled
    with the longest wait."""
    caller: Any = SimpleNamespace(user=user)
    view = APIView()
    waits = [throttle.wait() for throttle in view.get_throttles()
             if not throttle.allow_request(caller, view)]
    if waits:
        raise refusal(waits)


def _json(text: str | None) -> Any:
    return None if text is None else json.loads(text)
