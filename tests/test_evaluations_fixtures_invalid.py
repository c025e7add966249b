"""Bad test cases: 400 invalid_request naming each field path; nothing is stored."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from evaluations.models import Fixtures
from evaluations.serializers import MAX_CASE_INPUT_CHARS, MAX_CASES
from tests.conftest import Api
from tests.fixtures_helpers import case, fixtures_url, make_triage

BAD: list[tuple[list[dict[str, Any]], str]] = [
    ([case("A"), case("A")], "cases.1.name"),
    ([case("A", id="x1"), case("B", id="x1")], "cases.1.id"),
    ([case(id="bad id!")], "cases.0.id"),
    ([case(id=7)], "cases.0.id"),
    ([case(expected={"calls": ["is-refund", "nope", "also-nope"]})], "cases.0.expected.calls"),
    ([case(expected={"judge": {"criteria": ["vibes"]}})], "cases.0.expected.judge.criteria.0"),
    ([case(expected={"judge": {"criteria": []}})], "cases.0.expected.judge.criteria"),
    ([case(expected={"judge": {"criteria": ["safety", "safety"]}})],
     "cases.0.expected.judge.criteria"),
    ([case(expected={"judge": {"criteria": ["safety"], "min_score": 1.5}})],
     "cases.0.expected.judge.min_score"),
    ([case(expected={"judge": {"criteria": ["safety"], "min_score": "0.5"}})],
     "cases.0.expected.judge.min_score"),
    ([case(expected={"judge": {"criteria": ["safety"], "min_score": True}})],
     "cases.0.expected.judge.min_score"),
    ([case(input=5)], "cases.0.input"),
    ([case(input="x" * (MAX_CASE_INPUT_CHARS + 1))], "cases.0.input"),
    ([case(history=[{"role": "robot", "content": "x"}])], "cases.0.history.0.role"),
    ([case(tags="refunds")], "cases.0.tags"),
    ([{"input": "x"}], "cases.0.name"),
    ([case(str(i)) for i in range(MAX_CASES + 1)], "cases"),
]


@pytest.mark.parametrize(("cases", "path"), BAD)
def test_a_bad_case_is_400_naming_its_field(api: Api, alice: Any, carol: Any, acme: Any,
                                             cases: list[dict[str, Any]], path: str) -> None:
    design = make_triage(alice, acme)
    response = api.client_for(carol).put(fixtures_url(design), {
        "revision": 0, "cases": [case("Good one"), *cases] if path != "cases" else cases},
        format="json")
    shifted = path if path == "cases" else path.replace("cases.", "cases.", 1)
    error = api.assert_error(response, 400, "invalid_request")
    fields = error["details"]["fields"]
    if path != "cases":  # the good case is first: the bad one's index moves by one
        index = int(path.split(".")[1])
        shifted = ".".join(["cases", str(index + 1), *path.split(".")[2:]])
    assert shifted in fields, fields
    assert not Fixtures.objects.filter(design=design).exists()


def test_unknown_calls_are_named(api: Api, alice: Any, carol: Any, acme: Any) -> None:
    design = make_triage(alice, acme)
    response = api.client_for(carol).put(fixtures_url(design), {
        "revision": 0, "cases": [case(expected={"calls": ["model", "ghost", "spook"]})]},
        format="json")
    error = api.assert_error(response, 400, "invalid_request")
    [message] = error["details"]["fields"]["cases.0.expected.calls"]
    assert "ghost" in message and "spook" in message and "model" not in message


def test_every_bad_field_is_reported_at_once(api: Api, alice: Any, carol: Any,
                                             acme: Any) -> None:
    design = make_triage(alice, acme)
    response = api.client_for(carol).put(fixtures_url(design), {
        "revision": 0, "cases": [case("A"), case("A"), case("B", expected={"calls": ["x"]})]},
        format="json")
    error = api.assert_error(response, 400, "invalid_request")
    assert set(error["details"]["fields"]) == {"cases.1.name", "cases.2.expected.calls"}


def test_a_stored_revision_is_unchanged_by_a_bad_put(api: Api, alice: Any, carol: Any,
                                                     acme: Any) -> None:
    design = make_triage(alice, acme)
    client = api.client_for(carol)
    client.put(fixtures_url(design), {"revision": 0, "cases": [case()]}, format="json")
    bad = client.put(fixtures_url(design), {"revision": 1, "cases": [case("A"), case("A")]},
                     format="json")
    api.assert_error(bad, 400, "invalid_request")
    stored = Fixtures.objects.get(design=design)
    assert (stored.revision, [c["name"] for c in stored.cases]) == (1, ["Refund"])


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False,
                    allow_infinity=False) | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.sampled_from(["name", "input", "id", "tags",
                                                       "history", "expected", "calls",
                                                       "judge", "criteria", "min_score",
                                                       "role", "content", "x"]),
                                      inner, max_size=4), max_leaves=12)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases=JSON)
@example(cases=[{"name": "nul\x00", "input": "hi"}])  # refused by the parser, always tried
def test_any_json_is_a_200_or_a_field_error(api: Api, alice: Any, carol: Any, acme: Any,
                                            cases: Any) -> None:
    design = make_triage(alice, acme)
    response = api.client_for(carol).put(fixtures_url(design),
                                         {"revision": 0, "cases": cases}, format="json")
    if response.status_code == 200:
        assert Fixtures.objects.get(design=design).revision == 1
    else:
        # Text PostgreSQL cannot store (U+0000) is refused by the parser, for any route.
        api.assert_error(response, 400, "invalid_json" if _has_nul(cases) else "invalid_request")
        assert not Fixtures.objects.filter(design=design).exists()


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(item) for item in value)
    return False
