"""An agent's triggers (editors edit, viewers read) and the public webhook route."""

from __future__ import annotations

import uuid

from django.contrib.auth.models import User
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.decorators import (
    api_view,
    authentication_classes,
    parser_classes,
    permission_classes,
)
from rest_framework.parsers import BaseParser
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from deployments.agents import check_agent_access
from kionga.models import Role
from kionga.openapi import ERRORS, ok
from kionga.request_body import parse
from triggers import openapi as doc
from triggers.actions import (
    check_trigger,
    do_create,
    do_delete,
    do_update,
    trigger_dict,
    triggers_of,
)
from triggers.serializers import CreateTriggerSerializer, UpdateTriggerSerializer
from triggers.webhooks import DELIVERY_HEADER, SIGNATURE_HEADER, Delivery, check_webhook, do_receive


@extend_schema(methods=["GET"], responses={200: ok(doc.TRIGGERS), **ERRORS},
               operation_id="list_agent_triggers")
@extend_schema(methods=["POST"], request=CreateTriggerSerializer,
               responses={201: ok(doc.NEW_TRIGGER), **ERRORS},
               operation_id="create_agent_trigger")
@api_view(["GET", "POST"])
def triggers(request: Request, agent_id: uuid.UUID) -> Response:
    if request.method == "GET":
        return Response({"triggers": triggers_of(check_agent_access(request.user, agent_id))})
    agent = check_agent_access(request.user, agent_id, Role.EDITOR)
    body = parse(CreateTriggerSerializer, request.data)
    assert isinstance(request.user, User)
    return Response(do_create(request.user, agent, body), status=201)


@extend_schema(methods=["GET"], responses={200: ok(doc.TRIGGER_WITH_FIRINGS), **ERRORS},
               operation_id="get_agent_trigger")
@extend_schema(methods=["PATCH"], request=UpdateTriggerSerializer,
               responses={200: ok(doc.TRIGGER_WITH_FIRINGS), **ERRORS},
               operation_id="update_agent_trigger")
@extend_schema(methods=["DELETE"], responses={204: None, **ERRORS},
               operation_id="delete_agent_trigger")
@api_view(["GET", "PATCH", "DELETE"])
def trigger(request: Request, agent_id: uuid.UUID, trigger_id: uuid.UUID) -> Response:
    if request.method == "GET":
        agent = check_agent_access(request.user, agent_id)
        return Response(trigger_dict(check_trigger(agent, trigger_id)))
    agent = check_agent_access(request.user, agent_id, Role.EDITOR)
    found = check_trigger(agent, trigger_id)
    assert isinstance(request.user, User)
    if request.method == "DELETE":
        do_delete(request.user, found)
        return Response(status=204)
    body = parse(UpdateTriggerSerializer, request.data)
    return Response(trigger_dict(do_update(request.user, found, body)))


class RawBody(BaseParser):
    """Any media type: the view reads the raw bytes it verifies (request.body)."""

    media_type = "*/*"


@extend_schema(
    request={"application/json": {"type": "object"}, "*/*": {"type": "string"}},
    parameters=[
        OpenApiParameter(SIGNATURE_HEADER, str, OpenApiParameter.HEADER, required=True,
                         description="t=<unix seconds>,v1=<hex HMAC-SHA256 of "
                                     "\"<t>.<raw body>\" with the trigger's secret>"),
        OpenApiParameter(DELIVERY_HEADER, str, OpenApiParameter.HEADER, required=True,
                         description="Your ID of this delivery: a repeat starts nothing "
                                     "and gets the first answer (200)."),
    ],
    responses={202: ok(doc.FIRING), 200: ok(doc.FIRING, "A repeated delivery: the first "
                                                         "answer; nothing started."),
               **ERRORS},
    auth=[], operation_id="deliver_webhook")
@api_view(["POST"])
@authentication_classes([])
@permission_classes([AllowAny])
@parser_classes([RawBody])
def hook(request: Request, trigger_id: uuid.UUID) -> Response:
    found = check_webhook(trigger_id)
    firing, new = do_receive(found, Delivery(
        request.headers.get(SIGNATURE_HEADER, ""), request.headers.get(DELIVERY_HEADER, ""),
        request.body))
    return Response(firing.to_dict(), status=202 if new else 200)
