"""Every invalid_request answer has one details shape: ``{"fields": {path: [messages]}}``.

Serializer errors (nested ones too) and errors a view raises by hand for one field
(kionga.errors.invalid_field) are rendered the same way.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import path
from hypothesis import given
from hypothesis import strategies as st
from rest_framework import serializers
from rest_framework.decorators import api_view, permission_classes
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from kionga.errors import describe, field_errors, invalid_field
from kionga.request_body import StrictCharField, parse
from tests.conftest import Api


class TurnSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=["user", "assistant"])


class ChatSerializer(serializers.Serializer):
    name = StrictCharField()
    turns = serializers.ListField(child=TurnSerializer(), max_length=2)
    others = TurnSerializer(many=True, required=False)


@api_view(["POST"])
@permission_classes([AllowAny])
def chat(request: Request) -> Response:
    return Response(parse(ChatSerializer, request.data))


@api_view(["POST"])
@permission_classes([AllowAny])
def by_hand(request: Request) -> Response:
    raise invalid_field("stop_after", "No node of the graph has the ID 'x'.")


urlpatterns: list[Any] = [path("api/test/chat", chat), path("api/test/by-hand", by_hand)]
pytestmark = pytest.mark.urls(__name__)


def fields_of(api: Api, response: Any) -> dict[str, list[str]]:
    error = api.assert_error(response, 400, "invalid_request")
    assert set(error["details"]) == {"fields"}, error
    fields: dict[str, list[str]] = error["details"]["fields"]
    return fields


def test_it_names_nested_fields_by_path(api: Api) -> None:
    body = {"name": 3, "turns": [{"role": "user"}, {"role": "robot"}],
            "others": [{"role": "user"}, {}]}
    fields = fields_of(api, api.anon().post("/api/test/chat", body, format="json"))
    assert fields == {"name": ["Not a valid string."],
                      "turns.1.role": ['"robot" is not a valid choice.'],
                      "others.1.role": ["This field is required."]}


def test_it_names_the_list_for_a_list_error(api: Api) -> None:
    body = {"name": "x", "turns": [{"role": "user"}] * 3}
    response = api.anon().post("/api/test/chat", body, format="json")
    assert fields_of(api, response) == {
        "turns": ["Ensure this field has no more than 2 elements."]}


def test_it_puts_whole_body_errors_under_non_field_errors(api: Api) -> None:
    response = api.anon().post("/api/test/chat", [1], format="json")
    fields = fields_of(api, response)
    assert list(fields) == ["non_field_errors"]
    assert response.json()["error"]["message"] == fields["non_field_errors"][0]


def test_it_renders_a_field_error_raised_by_hand_the_same_way(api: Api) -> None:
    response = api.anon().post("/api/test/by-hand", {}, format="json")
    assert fields_of(api, response) == {"stop_after": ["No node of the graph has the ID 'x'."]}
    assert response.json()["error"]["message"] == (
        "stop_after: No node of the graph has the ID 'x'.")


messages = st.text(min_size=1, max_size=20)
details = st.recursive(
    messages | st.lists(messages, max_size=3),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=8) | st.integers(0, 5), inner, max_size=3),
    max_leaves=12,
)


@given(detail=details)
def test_it_flattens_any_error_detail_to_paths_with_messages(detail: Any) -> None:
    # Whatever a serializer (or a hand-raised ValidationError) puts in its detail,
    # the answer names at least one field and each field has messages.
    fields = field_errors(detail)
    assert fields and all(isinstance(p, str) for p in fields)
    assert all(msgs and all(isinstance(m, str) for m in msgs) for msgs in fields.values())
    code, message, rendered = describe(serializers.ValidationError(detail))
    assert (code, rendered) == ("invalid_request", {"fields": fields})
    assert message
