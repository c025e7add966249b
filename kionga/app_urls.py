"""Find the URL modules of the product apps, so each app owns its routes.

An app takes part by creating ``<app>/urls.py`` (public API, under /api/v1/),
``<app>/internal_urls.py`` (internal listener, under /api/v1/) and/or
``<app>/web_urls.py`` (web pages of the public listener, from its root). Nothing
else needs editing, and an app without such a module is simply skipped.
"""

from __future__ import annotations

from importlib.util import find_spec

from django.urls import URLResolver, include, path

PRODUCT_APPS = ("designs", "deployments", "runs", "evaluations", "approvals", "operations",
                "triggers")


def app_url_includes(module_name: str, prefix: str = "",
                     first: tuple[str, ...] = ()) -> list[URLResolver]:
    """``include("<app>.<module_name>")`` for every product app that has that module,
    the apps named in `first` first (Django tries a path against each pattern in turn)."""
    apps = [*first, *(app for app in PRODUCT_APPS if app not in first)]
    return [
        path(prefix, include(f"{app}.{module_name}"))
        for app in apps
        if find_spec(f"{app}.{module_name}") is not None
    ]
