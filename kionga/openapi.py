"""Helpers for the OpenAPI shapes every app documents its answers with.

Apps describe their JSON as plain JSON Schema dicts; these helpers turn them into
what drf-spectacular's ``extend_schema`` expects, with the one error shape on every
error status.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse

from kionga.serializers import ErrorSerializer

ANY: dict[str, Any] = {}
STRING: dict[str, Any] = {"type": "string"}
INTEGER: dict[str, Any] = {"type": "integer"}

ERRORS = {code: ErrorSerializer
          for code in (400, 401, 403, 404, 409, 413, 422, 429, 502, 503)}


def obj(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    """An object schema: these properties required, those optional."""
    return {"type": "object", "required": list(required),
            "properties": {**required, **(optional or {})}}


def json_body(schema: dict[str, Any]) -> dict[str, Any]:
    # extend_schema reads a plain dict as {media type: schema}.
    return {"application/json": schema}


def ok(schema: dict[str, Any], description: str = "") -> OpenApiResponse:
    return OpenApiResponse(response=schema, description=description)


def answers(status: int, schema: dict[str, Any]) -> dict[int, Any]:
    """The documented answers of a route: its success and every error status."""
    return {status: ok(schema), **ERRORS}
