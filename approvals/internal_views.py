"""Approval create and poll for run credentials (internal listener). No decision here.

The poll is a long poll (`?wait=` seconds): a pending request's answer waits on the
listener's event loop for the decision (approvals.waiting), holding no thread.
"""

from __future__ import annotations

import math
import uuid
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter
from rest_framework.request import Request
from rest_framework.response import Response

from approvals import actions, waiting
from approvals import openapi as doc
from approvals.models import ApprovalRequest
from approvals.serializers import NewApprovalSerializer
from kionga.errors import forbidden, invalid_field
from kionga.openapi import answers
from kionga.request_body import parse
from runs.loop_view import in_thread
from runs.models import Run
from runs.run_auth import run_of, run_view

WAIT = OpenApiParameter(
    "wait", float, required=False,
    description=f"Seconds (0–{waiting.MAX_WAIT_SECONDS:g}) a pending request's answer waits "
                "for its decision.")


@run_view(["POST"], request=NewApprovalSerializer,
          responses=answers(201, doc.APPROVAL), operation_id="internal_create_approval")
def approvals(request: Request) -> Response:
    new = actions.NewApproval(**parse(NewApprovalSerializer, request.data))
    approval = actions.do_request_approval(run_of(request), new)
    return Response(approval.to_dict(), status=201)


@run_view(["GET"], parameters=[WAIT], responses=answers(200, doc.APPROVAL),
          operation_id="internal_get_approval")
async def approval(request: Request, approval_id: uuid.UUID) -> Response:
    run, wait = run_of(request), _wait(request.query_params.get("wait"))
    found, answer = await in_thread(_answer)(run, approval_id)
    if wait > 0 and found.status == ApprovalRequest.Status.PENDING:
        left = (found.expires_at - timezone.now()).total_seconds()
        await waiting.until_settled(found.pk, max(0.0, min(wait, left)))
        found, answer = await in_thread(_answer)(run, approval_id)
    return Response(answer)


def _answer(run: Run, approval_id: uuid.UUID) -> tuple[ApprovalRequest, dict[str, Any]]:
    found = actions.check_run_approval(run, approval_id)
    return found, found.to_dict()  # it reads the decider: in the thread too


def _wait(raw: str | None) -> float:
    if raw is None:
        return 0.0
    try:
        wait = float(raw)
    except ValueError:
        wait = math.nan
    if not 0 <= wait <= waiting.MAX_WAIT_SECONDS:  # NaN included
        raise invalid_field("wait", f"Seconds from 0 to {waiting.MAX_WAIT_SECONDS:g}.")
    return wait


@run_view(["GET"], exclude=True)
def not_an_approval(request: Request, approval_id: str) -> Response:
    raise actions.unknown_approval()


@run_view(["POST"], exclude=True)
def no_decision(request: Request, approval_id: uuid.UUID) -> Response:
    # Any request, the run's own included: people decide, on the public listener.
    raise forbidden("A run cannot decide approval requests.")
