"""The condition grammar: every operator both ways, and what does not parse."""

from __future__ import annotations

import pytest

from contracts.conditions import OPERATORS, ConditionError, evaluate, parse_condition


@pytest.mark.parametrize(("expression", "text", "expected"), [
    ("contains:refund", "I want a refund now", True),
    ("contains:refund", "I want my money back", False),
    ("contains:REFUND", "a Refund please", True),
    ("not_contains:refund", "I want my money back", True),
    ("not_contains:refund", "REFUND!", False),
    ("equals:yes", "  YES \n", True),
    ("equals:  Yes  ", "yes", True),
    ("equals:yes", "yes please", False),
    ("matches:order \\d+", "about order 42, thanks", True),
    ("matches:order \\d+", "about Order 42", False),
    ("matches:(?i)order \\d+", "about ORDER 42", True),
    ("longer_than:3", "abcd", True),
    ("longer_than:3", "abc", False),
    ("empty", " \t\n", True),
    ("empty", " x ", False),
    ("not_empty", "x", True),
    ("not_empty", "   ", False),
])
def test_it_evaluates_every_operator(expression: str, text: str, expected: bool) -> None:
    assert evaluate(expression, text) is expected


def test_it_has_a_test_case_for_every_operator() -> None:
    assert set(OPERATORS) == {"contains", "not_contains", "equals", "matches", "longer_than",
                              "empty", "not_empty"}


def test_it_ignores_case_beyond_ascii() -> None:
    assert evaluate("contains:straße", "STRASSE")  # casefold, not lower
    assert evaluate("equals:ÉTÉ", "été")


def test_it_does_not_trim_for_contains() -> None:
    assert not evaluate("contains: refund", "refund")
    assert evaluate("contains: refund", "a refund")


def test_it_counts_code_points_of_the_untrimmed_text() -> None:
    assert evaluate("longer_than:3", "éééé")  # 4 code points, 8 UTF-8 bytes
    assert not evaluate("longer_than:3", "ééé")
    assert not evaluate("longer_than:4", "😀😀😀😀")
    assert evaluate("longer_than:2", "  a")  # the spaces count


def test_it_searches_rather_than_matching_the_whole_text() -> None:
    assert evaluate("matches:fun", "refund")
    assert not evaluate("matches:^fun$", "refund")
    assert evaluate("matches:^refund$", "refund")


def test_it_accepts_a_pattern_of_200_characters_and_refuses_201() -> None:
    assert evaluate("matches:" + "a" * 200, "a" * 200)
    with pytest.raises(ConditionError) as caught:
        parse_condition("matches:" + "a" * 201)
    assert caught.value.code == "invalid_regex"


@pytest.mark.parametrize("pattern", [
    "(?<=order )\\d+",  # lookbehind
    "(?=x)y",  # lookahead
    "(a)\\1",  # backreference
    "a++",  # possessive
    "[unclosed",
    "a{1001}",
    "\ud800",  # not Unicode at all
])
def test_it_refuses_patterns_outside_re2(pattern: str) -> None:
    with pytest.raises(ConditionError) as caught:
        parse_condition("matches:" + pattern)
    assert caught.value.code == "invalid_regex"


@pytest.mark.parametrize("expression", [
    "refund",  # free text, as version 1 allowed
    "Contains:refund",  # operators are lower case
    "starts_with:x",
    "contains:",
    "contains",
    "equals:",
    "not_contains:",
    "matches:",
    "longer_than:",
    "longer_than:abc",
    "longer_than:-1",
    "longer_than:1.5",
    "longer_than:٣",  # a digit, but not ASCII
    "empty:x",
    "not_empty:yes",
    "",
])
def test_it_refuses_malformed_expressions(expression: str) -> None:
    with pytest.raises(ConditionError) as caught:
        parse_condition(expression)
    assert caught.value.code == "invalid_condition"


def test_it_allows_spaces_around_the_operator_and_a_bare_colon_for_empty() -> None:
    assert evaluate("  contains:x", "X")
    assert evaluate("empty:", "")
    assert evaluate("longer_than: 2 ", "abc")


def test_it_takes_a_number_too_long_for_int() -> None:
    condition = parse_condition("longer_than:" + "9" * 5000)
    assert condition("a" * 10_000) is False


def test_it_matches_text_with_lone_surrogates() -> None:
    assert evaluate("matches:a.b", "a\ud800b")
    assert evaluate("contains:\ud800", "x\ud800")
