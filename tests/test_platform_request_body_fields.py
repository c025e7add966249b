"""parse() binds a serializer's declared fields once, not for each body (DRF deep-copies
them per instance), and gives the same answers: per body, per thread, and fresh fields
to a serializer whose fields change per instance."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from rest_framework import serializers

from kionga.request_body import StrictCharField, StrictIntegerField, parse

COPIES = [0]


class CountedCharField(StrictCharField):
    """A field that counts its copies."""

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        COPIES[0] += 1
        return super().__deepcopy__(memo)


class Turn(serializers.Serializer):
    role = serializers.ChoiceField(choices=["user", "assistant"])


class Body(serializers.Serializer):
    text = CountedCharField(max_length=5)
    count = StrictIntegerField(min_value=1, default=1)
    turns = serializers.ListField(child=Turn(), default=list)


class PerInstance(serializers.Serializer):
    """Fields made for each instance (a ModelSerializer's kind): never shared."""

    def get_fields(self) -> dict[str, Any]:
        COPIES[0] += 1
        return {"text": CountedCharField()}


def test_declared_fields_are_bound_once() -> None:
    parse(Body, {"text": "a"})
    before = COPIES[0]
    for _ in range(5):
        assert parse(Body, {"text": "abc", "count": 2}) == {"text": "abc", "count": 2,
                                                            "turns": []}
    assert COPIES[0] == before


def test_fields_made_per_instance_stay_so() -> None:
    before = COPIES[0]
    parse(PerInstance, {"text": "a"})
    parse(PerInstance, {"text": "b"})
    assert COPIES[0] == before + 2


@pytest.mark.parametrize("body, errors", [
    ({"text": "toolong"}, {"text": ["Ensure this field has no more than 5 characters."]}),
    ({"text": "a", "count": 0}, {"count": ["Ensure this value is greater than or equal to 1."]}),
    ({"text": "a", "turns": [{"role": "x"}]},
     {"turns": {"0": {"role": ['"x" is not a valid choice.']}}}),
    ({}, {"text": ["This field is required."]}),
])
def test_each_body_gets_its_own_errors(body: dict[str, Any], errors: dict[str, Any]) -> None:
    parse(Body, {"text": "ok"})  # the shared fields hold nothing of an earlier body
    with pytest.raises(serializers.ValidationError) as raised:
        parse(Body, body)
    assert _plain(raised.value.detail) == errors
    assert parse(Body, {"text": "ok"})["text"] == "ok"


def test_bodies_parsed_at_once_in_threads_keep_their_own_answers() -> None:
    def one(i: int) -> Any:
        body = {"text": str(i % 1000), "count": i + 1, "turns": [{"role": "user"}] * (i % 3)}
        if i % 4 == 0:
            body["count"] = 0
        try:
            return parse(Body, body)
        except serializers.ValidationError as exc:
            return _plain(exc.detail)

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(one, range(400)))
    for i, answer in enumerate(answers):
        if i % 4 == 0:
            assert answer == {"count": ["Ensure this value is greater than or equal to 1."]}
        else:
            assert answer == {"text": str(i % 1000), "count": i + 1,
                              "turns": [{"role": "user"}] * (i % 3)}


def _plain(detail: Any) -> Any:
    if isinstance(detail, dict):
        return {str(k): _plain(v) for k, v in detail.items()}
    if isinstance(detail, list):
        return [_plain(v) for v in detail]
    return str(detail)
