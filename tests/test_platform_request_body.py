"""Request fields take the JSON types they document, and keep text as sent.

DRF's own fields would take "5" as an integer, "yes" as a boolean and 3 as a string,
and trim strings; kionga.request_body's fields do none of that.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rest_framework import serializers

from kionga.request_body import StrictBooleanField, StrictCharField, StrictIntegerField, parse

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False,
                                                                      allow_infinity=False)
json_values = st.recursive(json_scalars | st.text(), lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                           max_leaves=6)


class Body(serializers.Serializer):
    text = StrictCharField(required=False, allow_blank=True)
    name = StrictCharField(required=False)
    count = StrictIntegerField(required=False, min_value=1)
    flag = StrictBooleanField(required=False)


def errors_of(body: Any) -> dict[str, Any]:
    with pytest.raises(serializers.ValidationError) as caught:
        parse(Body, body)
    detail: dict[str, Any] = caught.value.detail  # type: ignore[assignment]
    return detail


@given(text=st.text().filter(lambda t: "\x00" not in t))
def test_it_keeps_any_string_as_sent(text: str) -> None:
    assert parse(Body, {"text": text})["text"] == text


@given(value=json_values.filter(lambda v: not isinstance(v, str)))
def test_it_refuses_anything_but_a_string_for_text(value: Any) -> None:
    assert "text" in errors_of({"text": value})


@given(value=json_values.filter(lambda v: isinstance(v, bool) or not isinstance(v, int)))
def test_it_refuses_anything_but_an_integer(value: Any) -> None:
    assert "count" in errors_of({"count": value})


@given(value=json_values.filter(lambda v: not isinstance(v, bool)))
def test_it_refuses_anything_but_true_or_false(value: Any) -> None:
    assert "flag" in errors_of({"flag": value})


@given(blank=st.text(alphabet=" \t\n\r\u00a0\u2003", min_size=1))
def test_it_refuses_a_blank_name_without_trimming_a_real_one(blank: str) -> None:
    assert "name" in errors_of({"name": blank})
    assert parse(Body, {"name": f"{blank}x{blank}"})["name"] == f"{blank}x{blank}"


def test_it_checks_bounds_on_integers() -> None:
    assert "count" in errors_of({"count": 0})
    assert parse(Body, {"count": 1}) == {"count": 1}
