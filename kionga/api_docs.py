"""Swagger UI ("try it") for the API, beside ReDoc's reference at /api/docs/."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularSwaggerView
from rest_framework.request import Request
from rest_framework.response import Response


class SwaggerView(SpectacularSwaggerView):
    """drf-spectacular's Swagger UI page with our template: the sidecar's files and our
    static start script (kionga/static/kionga/swagger-ui-init.js), no inline script.

    The script sends Django's CSRF token on a signed-in person's writes; it reads the
    token from the cookie named here at each request (signing in elsewhere rotates it),
    falling back to the one the page was rendered with.
    """

    template_name = "kionga/swagger_ui.html"

    @extend_schema(exclude=True)
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        response = super().get(request, *args, **kwargs)
        response.data["csrf_cookie_name"] = settings.CSRF_COOKIE_NAME
        return response
