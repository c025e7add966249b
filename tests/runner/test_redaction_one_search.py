"""A text is searched once for every secret shape and configured pattern together
before any of them is applied (runner.redact): what is redacted stays exactly what
applying each pattern in turn redacts."""

from __future__ import annotations

import functools
from typing import Any

import re2
from hypothesis import example, given
from hypothesis import strategies as st

from contracts.text import PatternError, compile_re2, utf8_safe
from runner import redact
from runner.redact import BUILTIN_PATTERNS, DEFAULT_SECRET_PATTERNS, REDACTED, Redactor

CARD = r"\b(?:\d{4}-){3}\d{4}\b"
PIECES = ["Bearer abc.DEF-123_xyz", "bearer   tok", "sk-proj-AbCdEf0123456789xyz",
          "kio_" + "a" * 24, "sk_live_0123456789ab", "4111-1111-1111-1111", " ", "\u00e9",
          "word", "sk-", "kio_", "\ud800"]
texts = st.lists(st.sampled_from(PIECES) | st.text(max_size=6), max_size=12).map("".join)


def one_pattern_at_a_time(text: str, patterns: list[str]) -> str:
    """The reference: the built-in shapes' alternation, then each pattern, in order."""
    text = utf8_safe(text)  # RE2 reads UTF-8
    for pattern in _each(tuple(patterns)):
        text = pattern.sub(REDACTED, text)
    return text


@functools.cache
def _each(patterns: tuple[str, ...]) -> list[Any]:
    return [re2.compile("|".join(f"(?:{p})" for p in BUILTIN_PATTERNS)),
            *(re2.compile(p) for p in patterns)]


@given(texts)
@example("the card 4111-1111-1111-1111 and Bearer abc.DEF-123_xyz")
@example("nothing secret here")
def test_configured_patterns_redact_as_one_at_a_time(text: str) -> None:
    patterns = [*DEFAULT_SECRET_PATTERNS, CARD]
    assert Redactor(patterns=patterns).redact(text) == one_pattern_at_a_time(text, patterns)


def test_patterns_that_cannot_share_one_search_still_redact(monkeypatch: Any) -> None:
    # RE2 may refuse the union of patterns it accepts one by one (its memory budget):
    # each is then searched on its own.
    patterns = [r"\bcase-\d{3}\b", CARD]
    union = "|".join(f"(?:{p})" for p in [*BUILTIN_PATTERNS, *patterns])

    def compile_but_the_union(pattern: str) -> Any:
        if pattern == union:
            raise PatternError("out of memory")
        return compile_re2(pattern)

    monkeypatch.setattr(redact, "compile_re2", compile_but_the_union)
    text = "case-123, 4111-1111-1111-1111 and Bearer abc.DEF-123_xyz"
    assert Redactor(patterns=patterns).redact(text) == one_pattern_at_a_time(text, patterns)
    assert "case-123" not in Redactor(patterns=patterns).redact(text)
