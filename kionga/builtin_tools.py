"""Built-in tools: pure functions every project may call as `tool` nodes.

Each takes the node's JSON input and returns JSON. They run on the gateway (inside
the internal listener every run shares), so a graph never carries code, and so each
must stay cheap whatever the input: patterns are RE2 (linear time, no backtracking),
and an input longer than a node's longest value is refused with ToolError.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from contracts.registry import LIMITS
from contracts.text import compile_re2, utf8_safe

ToolFn = Callable[[Any], Any]

MAX_INPUT_CHARS: Final = LIMITS["value_chars"]
# Python's `\w` is letters, digits and `_` in any script; RE2's `\w` is ASCII only.
_EMAIL: Final = compile_re2(r"[\p{L}\p{N}_.+-]+@[\p{L}\p{N}_-]+\.[\p{L}\p{N}_.-]+")


class ToolError(ValueError):
    """The input cannot be handled; the message says why (it reaches the run)."""


def _text_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("input"), str):
        return str(value["input"])
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def word_count(text: str, value: Any) -> dict[str, Any]:
    return {"words": len(text.split()), "characters": len(text)}


def uppercase(text: str, value: Any) -> dict[str, Any]:
    return {"text": text.upper()}


def json_keys(text: str, value: Any) -> dict[str, Any]:
    return {"keys": sorted(value) if isinstance(value, dict) else []}


def extract_emails(text: str, value: Any) -> dict[str, Any]:
    return {"emails": _EMAIL.findall(utf8_safe(text))}


def _bounded(tool: Callable[[str, Any], Any]) -> ToolFn:
    """The tool, called with its input's text once that text is known to be in bounds."""
    def call(value: Any) -> Any:
        text = _text_of(value)
        if len(text) > MAX_INPUT_CHARS:
            raise ToolError(f"the input has {len(text):,} characters; "
                            f"built-in tools take at most {MAX_INPUT_CHARS:,}")
        return tool(text, value)

    return call


BUILTIN_TOOLS: Final[dict[str, ToolFn]] = {
    "word_count": _bounded(word_count),
    "uppercase": _bounded(uppercase),
    "json_keys": _bounded(json_keys),
    "extract_emails": _bounded(extract_emails),
}
