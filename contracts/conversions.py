"""Conversions between port types, exactly as the reference's table says.

json → text (compact JSON, key order kept, non-ASCII raw), documents → text (texts
joined by blank lines), chat → text (newest turn), text → chat (one user turn),
text → json (a JSON object or array parses as itself, anything else is
{"input": text}). There is no other conversion, and none is chained.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from contracts.types import PortType

CONVERSIONS: Final[dict[tuple[PortType, PortType], str]] = {
    ("json", "text"): "compact JSON",
    ("documents", "text"): "texts joined by blank lines",
    ("chat", "text"): "newest turn",
    ("text", "chat"): "one user turn",
    ("text", "json"): "parsed, or {\"input\": text}",
}


def target_type(source: PortType, accepted: Sequence[PortType]) -> PortType | None:
    """The type a value of `source` arrives as on a port that accepts `accepted`.

    The same type wins; otherwise the first accepted type with a conversion.
    None means the edge is `incompatible_types`.
    """
    if source in accepted:
        return source
    return next((t for t in accepted if (source, t) in CONVERSIONS), None)


def to_text(value: Any, source: PortType) -> str:
    if source == "text":
        return value if isinstance(value, str) else str(value)
    if source == "json":
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if source == "documents":
        return "\n\n".join(_doc_text(d) for d in value or [])
    if source == "chat":
        return _turn_text(value[-1]) if value else ""
    raise ValueError(f"no conversion from {source} to text")


def text_to_chat(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def text_to_json(text: str) -> Any:
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return json.loads(stripped)
        except ValueError:
            pass
    return {"input": text}


def convert(value: Any, source: PortType, target: PortType) -> Any:
    """Convert `value` of type `source` to `target` (one step of the table, or identity)."""
    if source == target:
        return value
    if target == "text":
        return to_text(value, source)
    if source == "text" and target == "chat":
        return text_to_chat(value)
    if source == "text" and target == "json":
        return text_to_json(value)
    raise ValueError(f"no conversion from {source} to {target}")


def _doc_text(doc: Any) -> str:
    if isinstance(doc, dict):
        text = doc.get("text", "")
        return text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
    return str(doc)


def _turn_text(turn: Any) -> str:
    if isinstance(turn, dict):
        content = turn.get("content", "")
        return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return str(turn)
