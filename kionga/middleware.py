"""JSON errors for /api/ routes that DRF does not handle.

Unknown URLs, Django's own 403/405 answers and crashes would otherwise be
HTML pages. Crashes still go through Django's normal path first (logging,
``got_request_exception``, so the test client re-raises them). The database being
away is no crash: every route answers 503 (kionga.database), JSON for the API and
/healthz, a small HTML page for the admin and the other pages.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseBase
from django.template.loader import render_to_string
from django.utils.deprecation import MiddlewareMixin

from kionga import database
from kionga.errors import (
    APIError,
    api_error_response,
    code_for_status,
    error_headers,
    error_response,
    invalid_field,
)
from kionga.http_limits import REFUSAL

_MESSAGES: dict[int, str] = {
    404: "Not found.",
    405: "Method not allowed.",
    500: "Internal server error.",
}


def is_api_path(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def answers_json(request: HttpRequest) -> bool:
    """The API and the health probe answer JSON; everything else is a page."""
    return is_api_path(request) or request.path == "/healthz"


class ApiJsonErrorMiddleware(MiddlewareMixin):
    # MiddlewareMixin keeps this usable in async mode, so SSE views stay fully async.

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        if is_api_path(request) and response.status_code >= 400 and not _is_json(response):
            return _replace(response)
        return response

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        # APIError raised from a plain Django view; DRF views handle it themselves.
        if isinstance(exc, APIError):
            return api_error_response(exc)
        # Any view's (DRF's handler leaves database errors to Django, hence here).
        unavailable = database.unavailable(exc)
        if unavailable is not None:
            return unavailable_response(request, unavailable)
        return None


def unavailable_response(request: HttpRequest,
                         error: database.DatabaseUnavailable) -> HttpResponse:
    if answers_json(request):
        return api_error_response(error)
    # Rendered without the request: its context processors would read the session.
    page = render_to_string("kionga/unavailable.html", {"message": error.message})
    response = HttpResponse(page, status=error.status_code)
    for name, value in error_headers(error).items():
        response[name] = value
    return response


def _is_json(response: HttpResponseBase) -> bool:
    return response.get("Content-Type", "").startswith("application/json")


def _replace(response: HttpResponseBase) -> HttpResponse:
    status = response.status_code
    code = code_for_status(status)
    message = _MESSAGES.get(status, response.reason_phrase or code)
    replacement = error_response(status, code, message)
    # The headers the middleware set on the original (HSTS, CSP, nosniff, Allow…).
    for name, value in response.headers.items():
        if name.lower() not in ("content-type", "content-length"):
            replacement[name] = value
    replacement["Content-Length"] = str(len(replacement.content))
    return replacement


class RequestRefusals(MiddlewareMixin):
    """Requests refused before any view, answered inside Django's middleware (after
    the host check and the HTTPS redirect, with every header the middleware above sets:
    HSTS behind TLS, CSP, nosniff…), the same on every route:

    - what the listener's request limits refused (kionga.http_limits: a body too large
      or too slow, too many header fields), with `Connection: close`: the rest of the
      body is never read;
    - a NUL (%00) in the path or a query parameter: PostgreSQL cannot hold U+0000, so it
      would reach a lookup and fail there (500).
    """

    def process_request(self, request: HttpRequest) -> HttpResponse | None:
        scope = getattr(request, "scope", None) or request.META.get("asgi.scope") or {}
        refusal = scope.get(REFUSAL)
        if refusal is not None:
            status, code, message = refusal
            response = error_response(status, code, message)
            response["Connection"] = "close"
            return response
        if "\x00" in request.path or any(
            "\x00" in key or any("\x00" in value for value in values)
            for key, values in request.GET.lists()
        ):
            if is_api_path(request):
                error = invalid_field("url", "Must not contain NUL (%00) characters.")
                return error_response(400, error.code, error.message, error.details)
            return HttpResponseBadRequest("The URL must not contain NUL (%00) characters.",
                                          content_type="text/plain")
        return None


class SyncChainMiddleware:
    """Last in MIDDLEWARE, sync only: under Django's ASGI handler (a project's notices,
    kionga.asgi) Django then runs the whole chain above it in one worker thread, instead
    of hopping to a thread and back for each method of each middleware (16 hops, ~5 ms
    per stream opened). The stream is still served by the event loop without holding a
    thread."""

    sync_capable = True
    async_capable = False

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        return self.get_response(request)
