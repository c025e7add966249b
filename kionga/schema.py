"""drf-spectacular extensions: describe our authentication in the OpenAPI document, and
group the operations under the tags and summaries of kionga.api_tags."""

from __future__ import annotations

from typing import Any

from drf_spectacular.drainage import warn
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema

from kionga.api_tags import OPERATIONS, Entry


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "kionga.auth.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "bearerFormat": "kio_<token>"}


class CatalogueAutoSchema(AutoSchema):
    """Tag and summary of an operation from kionga.api_tags, by its operation_id.

    A view's own ``extend_schema(tags=..., summary=...)`` still wins (drf-spectacular
    overrides these methods for it)."""

    def _entry(self) -> Entry | None:
        return OPERATIONS.get(self.get_operation_id())

    def get_tags(self) -> list[str]:
        entry = self._entry()
        if entry is None:
            warn(f"operation {self.get_operation_id()!r} has no tag and summary: "
                 "add it to kionga/api_tags.py")
            return list(super().get_tags())
        return [entry.tag]

    def get_summary(self) -> str | None:
        entry = self._entry()
        return entry.summary if entry else None


def keep_used_tags(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: list only the tags this document's operations use (the
    public one has no "internal" operation, the internal one nothing else)."""
    used = {tag for methods in result.get("paths", {}).values()
            for operation in methods.values() for tag in operation.get("tags", [])}
    result["tags"] = [tag for tag in result.get("tags", []) if tag["name"] in used]
    return result
