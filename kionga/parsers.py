"""The one strict JSON loader of the gateway, and the API's JSON parser built on it.

Python's json accepts what the rest of the platform cannot hold: lone surrogates
("\\ud800", which neither PostgreSQL nor redis-py nor our UTF-8 answers can encode),
NUL characters (PostgreSQL text and jsonb refuse U+0000), non-finite numbers
(1e999, NaN, Infinity: not JSON, and our renderer refuses them), and nesting so deep
that recursive code (ours, DRF's, the validator's) blows the stack. `loads` refuses
all of them with a JSONRefused that says what; request bodies (the DRF parser below)
and upstream answers (kionga.upstream) both parse with it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, Final

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

# Far deeper than any document, input or answer we use (a graph is 4 levels); shallow
# enough that every recursive walk over a parsed value stays far from Python's limit.
MAX_JSON_DEPTH: Final = 64

_SURROGATE = re.compile("[\ud800-\udfff]")
# How a parsed string can come to hold NUL or a surrogate: an escape for one. Matched
# in the raw text (also where it is not an escape, e.g. after an escaped backslash:
# then the walk decides).
_UNSTORABLE_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")


class JSONRefused(ValueError):
    """Text that is JSON, or nearly, but that the platform cannot accept; says why."""


def _refuse_constant(name: str) -> Any:
    raise JSONRefused(f"{name} is not a JSON number; send finite numbers only.")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise JSONRefused(f"The number {text[:40]} is too large; send finite numbers only.")
    return value


def loads(text: str | bytes) -> Any:
    """Parse JSON text; JSONRefused (a ValueError) for what the platform cannot accept.

    Bytes must be UTF-8. Syntax errors are the json module's own ValueErrors.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8")  # UnicodeDecodeError is a ValueError too
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        # The C scanner recurses per level; text this deep is refused by depth anyway.
        raise _too_deep() from None
    if not _surely_storable(text):
        check_value(value)
    return value


def _surely_storable(text: str) -> bool:
    """Whether the value parsed from `text` needs no walk: strict JSON (no raw control
    characters in strings) gets a NUL or a lone surrogate into a string only through an
    escape for one, or a surrogate in the text itself; and it nests no deeper than it
    has brackets. A few scans of the text in C instead of a walk over every value (an
    upstream's stream is hundreds of small chunks); any doubt walks."""
    return (text.count("{") + text.count("[") <= MAX_JSON_DEPTH
            and ("\\u" not in text or _UNSTORABLE_ESCAPE.search(text) is None)
            and _SURROGATE.search(text) is None)


# One decoder for every parse (json.loads with hooks builds a new one each call).
_DECODER: Final = json.JSONDecoder(parse_constant=_refuse_constant,
                                   parse_float=_finite_float)


def check_value(value: Any) -> None:
    """Refuse too-deep nesting and unstorable strings, walking without recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            _check_text(item)
        elif isinstance(item, Mapping) or isinstance(item, list):
            if depth > MAX_JSON_DEPTH:
                raise _too_deep()
            if isinstance(item, Mapping):
                for key, child in item.items():
                    _check_text(key)
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in item)


def _check_text(text: str) -> None:
    if "\x00" in text:
        raise JSONRefused("JSON strings must not contain NUL (\\u0000) characters.")
    if _SURROGATE.search(text):
        raise JSONRefused("JSON strings must not contain lone surrogates (\\ud800-\\udfff); "
                          "send valid Unicode.")


def _too_deep() -> JSONRefused:
    return JSONRefused(f"JSON is nested more than {MAX_JSON_DEPTH} levels deep.")


class StorableJSONParser(JSONParser):
    """DRF's JSON parser on `loads`: every JSON body of the API, public and internal."""

    def parse(self, stream: Any, media_type: str | None = None,
              parser_context: Mapping[str, Any] | None = None) -> Any:
        # Size: the listeners refuse big bodies before Django; any other way in meets
        # Django's DATA_UPLOAD_MAX_MEMORY_SIZE (= KIONGA_MAX_BODY_BYTES) when DRF reads
        # request.body, answered 413 by kionga.errors.
        raw = stream.read() if stream is not None else b""
        # A ParseError either way: 400 invalid_json, and invalid_document with an issue
        # on the validate routes (designs.actions.graph_body).
        try:
            return loads(raw)
        except JSONRefused as exc:
            raise ParseError(str(exc)) from None
        except ValueError as exc:
            raise ParseError(f"The body is not valid JSON: {_reason(exc)}") from None


def _reason(exc: ValueError) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "it is not UTF-8."
    # json's messages say what and where ("Expecting value: line 1 column 1 (char 0)");
    # too long a digit string is a plain ValueError with a message of its own.
    return f"{exc}."
