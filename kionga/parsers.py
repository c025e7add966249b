"""The API's JSON parser: JSON, minus what PostgreSQL cannot store.

PostgreSQL text and jsonb refuse the NUL character (U+0000), so a body carrying one
would fail when saved. It is refused up front, whatever the route, with a clear 400.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


def has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, Mapping):
        return any(has_nul(k) or has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_nul(item) for item in value)
    return False


class StorableJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None,
              parser_context: Mapping[str, Any] | None = None) -> Any:
        data = super().parse(stream, media_type, parser_context)
        if has_nul(data):
            raise ParseError("JSON strings must not contain NUL (\\u0000) characters.")
        return data
