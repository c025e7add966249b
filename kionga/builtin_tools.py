"""Built-in tools: pure functions every project may call as `tool` nodes.

Each takes the node's JSON input and returns JSON. They run on the gateway, so a
graph never carries code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

ToolFn = Callable[[Any], Any]


def _text_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("input"), str):
        return str(value["input"])
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def word_count(value: Any) -> dict[str, Any]:
    text = _text_of(value)
    return {"words": len(text.split()), "characters": len(text)}


def uppercase(value: Any) -> dict[str, Any]:
    return {"text": _text_of(value).upper()}


def json_keys(value: Any) -> dict[str, Any]:
    return {"keys": sorted(value) if isinstance(value, dict) else []}


def extract_emails(value: Any) -> dict[str, Any]:
    return {"emails": re.findall(r"[\w.+-]+@[\w-]+\.[\w.-]+", _text_of(value))}


BUILTIN_TOOLS: dict[str, ToolFn] = {
    "word_count": word_count,
    "uppercase": uppercase,
    "json_keys": json_keys,
    "extract_emails": extract_emails,
}
