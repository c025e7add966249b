"""Internal listener (:8087): only what a run credential may call.

The resource routes of the reference's security model (models/{id}/predict,
functions/{name}/invoke, ...) and approval create/poll come from each app's
``internal_urls.py``, mounted under /api/v1/ (the runner's callback URL).
Nothing else is reachable on this port: no admin, no public API.
"""

from django.urls import URLPattern, URLResolver, path

from kionga import views
from kionga.app_urls import app_url_includes

urlpatterns: list[URLPattern | URLResolver] = [
    path("healthz", views.healthz, name="internal-healthz"),
    *app_url_includes("internal_urls", prefix="api/v1/"),
]
