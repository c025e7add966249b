"""Approval create and poll for run credentials (internal listener). No decision here."""

from __future__ import annotations

import uuid

from rest_framework.request import Request
from rest_framework.response import Response

from approvals import actions
from approvals import openapi as doc
from approvals.serializers import NewApprovalSerializer
from kionga.errors import forbidden
from kionga.openapi import answers
from kionga.request_body import parse
from runs.run_auth import run_of, run_view


@run_view(["POST"], request=NewApprovalSerializer,
          responses=answers(201, doc.APPROVAL), operation_id="internal_create_approval")
def approvals(request: Request) -> Response:
    new = actions.NewApproval(**parse(NewApprovalSerializer, request.data))
    approval = actions.do_request_approval(run_of(request), new)
    return Response(approval.to_dict(), status=201)


@run_view(["GET"], responses=answers(200, doc.APPROVAL), operation_id="internal_get_approval")
def approval(request: Request, approval_id: uuid.UUID) -> Response:
    return Response(actions.check_run_approval(run_of(request), approval_id).to_dict())


@run_view(["GET"], exclude=True)
def not_an_approval(request: Request, approval_id: str) -> Response:
    raise actions.unknown_approval()


@run_view(["POST"], exclude=True)
def no_decision(request: Request, approval_id: uuid.UUID) -> Response:
    # Any request, the run's own included: people decide, on the public listener.
    raise forbidden("A run cannot decide approval requests.")
