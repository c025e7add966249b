"""Public approval routes: read one request, and decide it (people with agents write access).

Run credentials never reach these (the public listener refuses them); listing,
creation by deployed agents and the approver web UI come with the approvals issue.
"""

from __future__ import annotations

import uuid

from django.contrib.auth.models import User
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from approvals.actions import do_decide, refresh_expiry
from approvals.models import ApprovalRequest
from approvals.serializers import DecisionSerializer
from kionga.access import AnyUser, check_project_access
from kionga.errors import not_found
from kionga.openapi import ERRORS
from kionga.request_body import parse


def check_approval_access(user: AnyUser, approval_id: uuid.UUID) -> ApprovalRequest:
    approval = ApprovalRequest.objects.filter(pk=approval_id).first()
    if approval is None:
        raise not_found("Approval request not found.")
    check_project_access(user, approval.project_id)
    return refresh_expiry(approval)


@extend_schema(responses={200: dict, **ERRORS}, operation_id="get_approval")
@api_view(["GET"])
def approval(request: Request, approval_id: uuid.UUID) -> Response:
    return Response(check_approval_access(request.user, approval_id).to_dict())


@extend_schema(request=DecisionSerializer, responses={200: dict, **ERRORS},
               operation_id="decide_approval")
@api_view(["POST"])
def decision(request: Request, approval_id: uuid.UUID) -> Response:
    found = check_approval_access(request.user, approval_id)
    body = parse(DecisionSerializer, request.data)
    assert isinstance(request.user, User)
    decided = do_decide(request.user, found, body["decision"], body["comment"] or "")
    return Response(decided.to_dict())
