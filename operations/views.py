"""GET agent-designs/overview?project_id= and GET agents/{id}/operations?hours=."""

from __future__ import annotations

import uuid

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from deployments.agents import check_agent_access
from kionga.access import check_project_access
from kionga.openapi import ERRORS, ok
from kionga.request_body import parse
from operations import openapi as doc
from operations.read import operations as agent_operations
from operations.read import overview as project_overview
from operations.serializers import OperationsQuery, OverviewQuery


@extend_schema(parameters=[OpenApiParameter("project_id", int, required=True)],
               responses={200: ok(doc.OVERVIEW), **ERRORS}, operation_id="designs_overview")
@api_view(["GET"])
def overview(request: Request) -> Response:
    query = parse(OverviewQuery, request.query_params)
    project = check_project_access(request.user, query["project_id"])
    return Response(project_overview(project))


@extend_schema(parameters=[OpenApiParameter("hours", int, required=False,
                                            description="1 to 168 (default 24)")],
               responses={200: ok(doc.OPERATIONS), **ERRORS}, operation_id="agent_operations")
@api_view(["GET"])
def operations(request: Request, agent_id: uuid.UUID) -> Response:
    agent = check_agent_access(request.user, agent_id)
    query = parse(OperationsQuery, request.query_params)
    return Response(agent_operations(agent, query["hours"]))
