"""The agent runtime's turn routes on the internal listener (agent credential only).

Each carries the runtime's caller's agent API key (contracts.agent_runtime.KEY_HEADER):
verified and counted here (deployments.api_keys), so a revoked key is refused at once.
"""

from __future__ import annotations

import uuid

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from contracts.agent_runtime import KEY_HEADER
from deployments.api_keys import check_caller_key
from kionga.openapi import answers, obj
from kionga.request_body import StrictBooleanField, StrictCharField, StrictIntegerField, parse
from runs.agent_auth import agent_of, agent_view
from runs.agent_turns import TurnReport, do_open_turn, do_report_turn
from runs.serializers import MAX_INPUT_CHARS, MAX_SESSION_ID

TURN = obj({"turn_id": {"type": "string", "format": "uuid"},
            "status": {"type": "string"}})
KEY = obj({"key_id": {"type": "string", "format": "uuid"}})


class OpenTurnSerializer(serializers.Serializer):
    version_id = StrictCharField(max_length=64)
    input = StrictCharField(max_length=MAX_INPUT_CHARS, allow_blank=True, default="")
    session_id = StrictCharField(max_length=MAX_SESSION_ID, allow_blank=True, default="")
    key_counted = StrictBooleanField(
        default=False, help_text="The runtime had this request's key counted already "
                                 "(agent-keys/check): verify it, count it no more.")


class ErrorSerializer(serializers.Serializer):
    code = StrictCharField(max_length=64)
    message = StrictCharField(max_length=2000, allow_blank=True)


class ReportTurnSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["completed", "failed", "cancelled"])
    latency_ms = StrictIntegerField(min_value=0, max_value=86_400_000)
    tokens = StrictIntegerField(min_value=0, max_value=10**12)
    output = StrictCharField(max_length=70_000, allow_blank=True, allow_null=True,
                             default=None)
    error = ErrorSerializer(allow_null=True, default=None)


@agent_view(["POST"], request=OpenTurnSerializer, responses=answers(201, TURN),
            operation_id="internal_open_agent_turn")
def open_turn(request: Request) -> Response:
    body = parse(OpenTurnSerializer, request.data)
    agent = agent_of(request)
    check_caller_key(agent, request.headers.get(KEY_HEADER, ""), count=not body["key_counted"])
    turn = do_open_turn(agent, body["version_id"], body["input"], body["session_id"])
    return Response({"turn_id": str(turn.pk), "status": turn.status}, status=201)


@agent_view(["POST"], request=ReportTurnSerializer, responses=answers(200, TURN),
            operation_id="internal_report_agent_turn")
def report_turn(request: Request, turn_id: uuid.UUID) -> Response:
    body = parse(ReportTurnSerializer, request.data)
    error = dict(body["error"]) if body["error"] else None
    turn = do_report_turn(agent_of(request), turn_id, TurnReport(
        status=body["status"], latency_ms=body["latency_ms"], tokens=body["tokens"],
        output=body["output"], error=error))
    return Response({"turn_id": str(turn.pk), "status": turn.status})


@agent_view(["POST"], request=None, responses=answers(200, KEY),
            operation_id="internal_check_agent_api_key")
def check_key(request: Request) -> Response:
    """A request of the runtime's that opens no turn (its models list, MCP's handshake)."""
    key = check_caller_key(agent_of(request), request.headers.get(KEY_HEADER, ""))
    return Response({"key_id": str(key.pk)})
