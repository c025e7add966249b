"""GET /api/v1/: the API's entry points (its routes without a path parameter) and its
docs. Read from the URLconf, so a new route is listed without editing anything here."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import cache
from typing import Any, Final

from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.urls.resolvers import RoutePattern

API_PREFIX: Final = "api/v1/"
API_NAME: Final = "Kionga Agent Designer API"


def _routes(patterns: Sequence[URLPattern | URLResolver], prefix: str = "") -> Iterator[str]:
    """Every route under patterns that takes no path parameter."""
    for pattern in patterns:
        if not isinstance(pattern.pattern, RoutePattern) or pattern.pattern.converters:
            continue  # a parameter (or a regular expression: the static files)
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, route)
        else:
            yield route


@cache
def entry_points() -> dict[str, str]:
    """Each entry point's route (its name here) and URL, in the URLconf's order."""
    return {route.removeprefix(API_PREFIX): "/" + route
            for route in _routes(get_resolver().url_patterns)
            if route.startswith(API_PREFIX) and route != API_PREFIX}


def api_index() -> dict[str, Any]:
    # Nothing here depends on the caller: the same answer with or without credentials.
    return {"name": API_NAME, "version": "v1", "entry_points": entry_points(),
            "docs": {"openapi": reverse("schema"), "reference": reverse("docs")}}
