"""Internal listener (:8087): only what a run credential may call.

The resource routes of the reference's security model (models/{id}/predict,
functions/{name}/invoke, ...) and approval create/poll are added here by their
apps. Nothing else is reachable on this port: no admin, no public API.
"""

from django.urls import URLPattern, URLResolver, path

from kionga import views

urlpatterns: list[URLPattern | URLResolver] = [
    path("healthz", views.healthz, name="internal-healthz"),
]
