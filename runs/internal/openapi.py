"""OpenAPI shapes of the internal routes' answers: runner/resources.py's contract.

Request bodies are declared by the serializers in serializers.py.

The test client validates every documented answer against these, so the gateway
cannot drift from what the runner's HttpResources expects.
"""

from __future__ import annotations

from typing import Any

from kionga.openapi import ANY, INTEGER, STRING, answers, obj

__all__ = ["answers"]

PREDICT = obj({"text": STRING}, {"usage": obj({"tokens": INTEGER})})
INVOKE = obj({"output": ANY})
CONNECTION = obj({"status": INTEGER, "body": ANY})
KNOWLEDGE_BASES = obj({"knowledge_bases": {"type": "array",
                                           "items": obj({"id": STRING, "name": STRING})}})
DOCUMENT = obj({"text": STRING}, {"id": STRING, "score": {"type": "number"},
                                  "metadata": {"type": "object"}})
SEARCH = obj({"documents": {"type": "array", "items": DOCUMENT}})
OBJECT: dict[str, Any] = obj({"key": STRING, "text": STRING}, {"content_type": STRING})
