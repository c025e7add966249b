"""Public API routes under /api/v1/: each app's ``urls.py``, then the platform's own."""

from django.urls import URLPattern, URLResolver, include, path

from kionga import views
from kionga.app_urls import app_url_includes

# The runs' routes first: Django tries a path against each pattern in turn, noting
# every miss, and a run's start and event stream are the busiest requests. No two
# modules' routes match the same path, so the order decides nothing else.
urlpatterns: list[URLPattern | URLResolver] = [
    *app_url_includes("urls", first=("runs",)),
    path("", views.api_root, name="api-root"),
    path("me", views.me, name="me"),
    path("", include("kionga.projects.urls")),
]
