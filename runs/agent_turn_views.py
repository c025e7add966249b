"""The agent runtime's turn routes on the internal listener (agent credential only)."""

from __future__ import annotations

import uuid

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from kionga.openapi import answers, obj
from kionga.request_body import StrictCharField, StrictIntegerField, parse
from runs.agent_auth import agent_of, agent_view
from runs.agent_turns import TurnReport, do_open_turn, do_report_turn
from runs.serializers import MAX_INPUT_CHARS, MAX_SESSION_ID

TURN = obj({"turn_id": {"type": "string", "format": "uuid"},
            "status": {"type": "string"}})


class OpenTurnSerializer(serializers.Serializer):
    version_id = StrictCharField(max_length=64)
    input = StrictCharField(max_length=MAX_INPUT_CHARS, allow_blank=True, default="")
    session_id = StrictCharField(max_length=MAX_SESSION_ID, allow_blank=True, default="")


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
    turn = do_open_turn(agent_of(request), body["version_id"], body["input"],
                        body["session_id"])
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
