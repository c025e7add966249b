"""Public API routes under /api/v1/: the platform's own, then each app's ``urls.py``."""

from django.urls import URLPattern, URLResolver, include, path

from kionga import views
from kionga.app_urls import app_url_includes

urlpatterns: list[URLPattern | URLResolver] = [
    path("", views.api_root, name="api-root"),
    path("me", views.me, name="me"),
    path("", include("kionga.projects.urls")),
    *app_url_includes("urls"),
]
