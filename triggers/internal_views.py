"""The agent runtime's claim of a triggered turn (internal listener, agent credential)."""

from __future__ import annotations

import uuid

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from kionga.openapi import answers, obj
from kionga.request_body import StrictCharField, parse
from runs.agent_auth import agent_of, agent_view
from triggers.firings import do_claim

CLAIMED = obj({"turn_id": {"type": "string", "format": "uuid"}, "input": {"type": "string"},
               "session_id": {"type": "string"}})


class ClaimSerializer(serializers.Serializer):
    version_id = StrictCharField(max_length=64)


@agent_view(["POST"], request=ClaimSerializer, responses=answers(200, CLAIMED),
            operation_id="internal_claim_agent_turn")
def claim_turn(request: Request, turn_id: uuid.UUID) -> Response:
    body = parse(ClaimSerializer, request.data)
    turn = do_claim(agent_of(request), turn_id, body["version_id"])
    return Response({"turn_id": str(turn.pk), "input": turn.input,
                     "session_id": turn.session_id})
