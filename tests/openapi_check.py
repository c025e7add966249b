"""Check API answers against our own OpenAPI document (a Zulip habit).

Every response the test client receives is validated against the schema that
drf-spectacular publishes for its route, method and status. An answer whose
status is not documented is not checked here (errors are checked for their
shape by ``Api.assert_error``); a documented one must match, so the docs
cannot drift from the code.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import jsonschema
from django.conf import settings
from django.urls import Resolver404, resolve
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

DOC_URI = "urn:kionga:openapi"
_CONVERTER = re.compile(r"<(?:[^:>]+:)?([^>]+)>")


@cache
def openapi_document(urlconf: str) -> dict[str, Any]:
    # Quiet: schema warnings are the job of test_platform_schema (--fail-on-warn),
    # not of every test that happens to call the API first.
    with GENERATOR_STATS.silence():
        schema = SchemaGenerator(urlconf=urlconf).get_schema(request=None, public=True)
    GENERATOR_STATS.reset()
    # Round-trip through the renderer: the raw schema holds lazy strings and enums.
    return dict(json.loads(OpenApiJsonRenderer().render(schema)))


def path_template(path: str) -> str | None:
    """``/api/v1/x/<str:id>`` route of path, in OpenAPI form ``/api/v1/x/{id}``."""
    try:
        route = resolve(path).route
    except Resolver404:
        return None
    return "/" + _CONVERTER.sub(r"{\1}", route)


def check_response(method: str, path: str, status: int, body: Any) -> None:
    urlconf = str(settings.ROOT_URLCONF)
    pointer = response_pointer(openapi_document(urlconf), method, path, status)
    if pointer is None:
        return
    registry: Registry[Any] = Registry().with_resource(
        DOC_URI, Resource.from_contents(openapi_document(urlconf), DRAFT202012)
    )
    validator = jsonschema.Draft202012Validator({"$ref": DOC_URI + pointer}, registry=registry)
    errors = sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path) or "(root)"
        raise AssertionError(
            f"{method} {path} -> {status} does not match its OpenAPI schema at {where}: "
            f"{errors[0].message}"
        )


def response_pointer(doc: dict[str, Any], method: str, path: str, status: int) -> str | None:
    """JSON pointer to the documented JSON body schema, or None when undocumented."""
    template = path_template(path)
    operation = doc.get("paths", {}).get(template, {}).get(method.lower())
    if template is None or operation is None:
        return None
    key = str(status) if str(status) in operation.get("responses", {}) else None
    schema = (
        operation["responses"].get(key, {}).get("content", {}).get("application/json", {})
        if key
        else {}
    )
    if "schema" not in schema:
        return None
    escaped = template.replace("~", "~0").replace("/", "~1")
    return f"#/paths/{escaped}/{method.lower()}/responses/{key}/content/application~1json/schema"
