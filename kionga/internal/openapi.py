"""OpenAPI shapes of the internal routes: runner/resources.py's contract, as JSON Schema.

The test client validates every documented answer against these, so the gateway
cannot drift from what the runner's HttpResources expects.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse

from kionga.serializers import ErrorSerializer

ANY: dict[str, Any] = {}
STRING: dict[str, Any] = {"type": "string"}
INTEGER: dict[str, Any] = {"type": "integer"}


def obj(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "object", "required": list(required),
            "properties": {**required, **(optional or {})}}


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
OBJECT = obj({"key": STRING, "text": STRING}, {"content_type": STRING})
APPROVAL_REQUEST = obj({"node_id": STRING, "message": STRING,
                        "timeout_seconds": {"type": "integer", "minimum": 10, "maximum": 290}},
                       {"preview": STRING})
APPROVAL = obj(
    {"id": STRING,
     "status": {"enum": ["pending", "approved", "rejected", "expired", "cancelled"]},
     "comment": {"type": ["string", "null"]}},
    {"expires_at": STRING, "node_id": STRING, "run_id": {"type": ["string", "null"]}},
)

ERRORS = {code: ErrorSerializer for code in (400, 401, 403, 404, 409, 422, 502, 503)}


def json_body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": schema}


def answers(status: int, schema: dict[str, Any]) -> dict[int, Any]:
    return {status: OpenApiResponse(response=schema), **ERRORS}
