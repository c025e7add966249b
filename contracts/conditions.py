"""The condition grammar used by condition nodes, router routes and loop `until`.

`op:argument` or a bare `empty` / `not_empty`. contains, not_contains and equals
ignore case (equals also trims both sides) and need a non-empty argument; matches
searches with an RE2 pattern of at most 200 characters (case-sensitive unless it
says `(?i)`); longer_than:N counts code points of the untrimmed text; empty is true
when the text is blank after trimming.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from contracts.text import PatternError, compile_re2, utf8_safe

MAX_REGEX_CHARS: Final = 200


@dataclass(frozen=True)
class Operator:
    name: str
    argument: str  # "text", "regex", "integer" or "none"
    help: str


OPERATORS: Final[dict[str, Operator]] = {
    op.name: op
    for op in (
        Operator("contains", "text", "The text contains the argument (any case)."),
        Operator("not_contains", "text", "The text does not contain the argument (any case)."),
        Operator("equals", "text", "The trimmed text equals the trimmed argument (any case)."),
        Operator("matches", "regex", "An RE2 pattern (≤ 200 characters) is found in the text."),
        Operator("longer_than", "integer", "The text has more than N characters."),
        Operator("empty", "none", "The text is blank."),
        Operator("not_empty", "none", "The text is not blank."),
    )
}


class ConditionError(ValueError):
    """A condition that does not parse. `code` is the validation issue code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Condition:
    operator: str
    argument: str
    test: Callable[[str], bool]

    def __call__(self, text: str) -> bool:
        return self.test(text)


def parse_condition(expression: str) -> Condition:
    """Parse an expression or raise ConditionError (invalid_condition / invalid_regex)."""
    return _parse_cached(expression)


def evaluate(expression: str, text: str) -> bool:
    return parse_condition(expression)(text)


@lru_cache(maxsize=4096)
def _parse_cached(expression: str) -> Condition:
    name, sep, arg = expression.partition(":")
    op = OPERATORS.get(name.strip())
    if op is None:
        known = ", ".join(OPERATORS)
        raise ConditionError(
            "invalid_condition", f"unknown operator {name.strip()!r}; use one of {known}"
        )
    if op.argument == "none":
        if sep and arg.strip():
            raise ConditionError("invalid_condition", f"{op.name} takes no argument")
        return Condition(op.name, "", _NO_ARG[op.name])
    if not sep or arg == "":
        raise ConditionError("invalid_condition", f"{op.name} needs an argument, e.g. {op.name}:x")
    if op.argument == "integer":
        return _longer_than(arg)
    if op.argument == "regex":
        return _matches(arg)
    return _text_test(op.name, arg)


def _text_test(name: str, arg: str) -> Condition:
    needle = arg.casefold()
    if name == "equals":
        trimmed = arg.strip().casefold()
        return Condition(name, arg, lambda t: t.strip().casefold() == trimmed)
    if name == "contains":
        return Condition(name, arg, lambda t: needle in t.casefold())
    return Condition(name, arg, lambda t: needle not in t.casefold())


def _longer_than(arg: str) -> Condition:
    stripped = arg.strip()
    if not stripped.isdigit() or not stripped.isascii():
        raise ConditionError("invalid_condition", "longer_than takes a whole number")
    # int() refuses strings over 4,300 digits; any such N is beyond every text anyway.
    digits = stripped.lstrip("0") or "0"
    limit = int(digits) if len(digits) <= 18 else sys.maxsize
    return Condition("longer_than", arg, lambda t: len(t) > limit)


def _matches(pattern: str) -> Condition:
    if len(pattern) > MAX_REGEX_CHARS:
        raise ConditionError(
            "invalid_regex", f"the pattern has {len(pattern)} characters; at most 200"
        )
    try:
        compiled = compile_re2(pattern)
    except PatternError as exc:
        raise ConditionError("invalid_regex", f"not a valid RE2 pattern: {exc}") from None
    # RE2 needs UTF-8: unpaired surrogates in the text are searched as U+FFFD.
    return Condition("matches", pattern, lambda t: compiled.search(utf8_safe(t)) is not None)


_NO_ARG: Final[dict[str, Callable[[str], bool]]] = {
    "empty": lambda t: t.strip() == "",
    "not_empty": lambda t: t.strip() != "",
}
