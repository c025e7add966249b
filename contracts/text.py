"""Text every store accepts, and RE2 patterns: the two rules for run and user text.

PostgreSQL's jsonb refuses U+0000 and unpaired surrogates; redis-py and RE2 cannot
encode unpaired surrogates (UTF-8 has no form for them). Python's `json` happily
produces both from input like `"x\\ud800y"`, so every event the runner sends goes
through `storable` first. Python's `re` backtracks, so every pattern applied to
user or run text is compiled by `compile_re2` (linear time).
"""

from __future__ import annotations

import math
from typing import Any, Final

import re2

REPLACEMENT: Final = "\ufffd"


def utf8_safe(text: str) -> str:
    """`text` with each unpaired surrogate replaced by U+FFFD (a valid pair is joined)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # Through UTF-16: a high + low pair becomes its character, a lone half U+FFFD.
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def storable_text(text: str) -> str:
    """`text` without U+0000 and unpaired surrogates (each becomes U+FFFD)."""
    if "\x00" in text:
        text = text.replace("\x00", REPLACEMENT)
    return utf8_safe(text)


def storable(value: Any) -> Any:
    """A JSON value whose every string (keys included) is storable_text, and whose
    numbers are finite (JSON has no NaN or Infinity: those become null).

    Nearly every value is storable already: a walk that allocates nothing proves it,
    and only a value that fails it is rebuilt.
    """
    return value if _is_storable(value) else _rebuilt(value)


def _is_storable(value: Any) -> bool:
    kind = type(value)
    if kind is str:
        return "\x00" not in value and (value.isascii() or utf8_safe(value) is value)
    if kind is dict:
        for key, item in value.items():
            if not (type(key) is str and _is_storable(key) and _is_storable(item)):
                return False
        return True
    if kind is list:
        return all(_is_storable(item) for item in value)
    if kind is float:
        return math.isfinite(value)
    return value is None or kind is int or kind is bool


def _rebuilt(value: Any) -> Any:
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        return {storable_text(str(k)): _rebuilt(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rebuilt(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class PatternError(ValueError):
    """A pattern RE2 does not accept; the message says why."""


def compile_re2(pattern: str) -> Any:
    """The compiled RE2 pattern, or PatternError with RE2's reason."""
    options = re2.Options()
    options.log_errors = False  # the caller reports the error itself
    try:
        return re2.compile(pattern, options)
    except UnicodeEncodeError:
        raise PatternError("the pattern is not valid Unicode") from None
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):  # re2 reports its reason as bytes
            reason = reason.decode("utf-8", "replace")
        raise PatternError(str(reason)) from None
