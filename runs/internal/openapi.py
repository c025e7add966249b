"""OpenAPI shapes of the internal routes: runner/resources.py's contract, as JSON Schema.

The test client validates every documented answer against these, so the gateway
cannot drift from what the runner's HttpResources expects.
"""

from __future__ import annotations

from typing import Any

from kionga.openapi import ANY, INTEGER, STRING, answers, json_body, obj

__all__ = ["answers", "json_body"]

MESSAGE = obj({"role": {"enum": ["system", "user", "assistant"]}, "content": STRING})
PREDICT_REQUEST = obj({"messages": {"type": "array", "items": MESSAGE, "minItems": 1}})
PREDICT = obj({"text": STRING}, {"usage": obj({"tokens": INTEGER})})
INVOKE_REQUEST = obj({"input": ANY})
INVOKE = obj({"output": ANY})
CONNECTION_REQUEST = obj({"method": STRING, "path": STRING}, {"body": ANY})
CONNECTION = obj({"status": INTEGER, "body": ANY})
KNOWLEDGE_BASES = obj({"knowledge_bases": {"type": "array",
                                           "items": obj({"id": STRING, "name": STRING})}})
SEARCH_REQUEST = obj({"query": STRING},
                     {"limit": {"type": "integer", "minimum": 1, "maximum": 20}})
DOCUMENT = obj({"text": STRING}, {"id": STRING, "score": {"type": "number"},
                                  "metadata": {"type": "object"}})
SEARCH = obj({"documents": {"type": "array", "items": DOCUMENT}})
OBJECT: dict[str, Any] = obj({"key": STRING, "text": STRING}, {"content_type": STRING})
