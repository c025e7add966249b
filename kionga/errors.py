"""Every API error has one shape: ``{"error": {"code", "message", "details"}}``.

Views raise :class:`APIError` (or a DRF/Django exception); the DRF exception
handler below and :mod:`kionga.middleware` (for non-DRF routes) render it.
Codes are stable snake_case strings clients may switch on.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, JsonResponse
from rest_framework import exceptions as drf
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import set_rollback

# The catalogue: every code an API answer may carry, declared here and nowhere else
# (mypy refuses an APIError with a code missing here; a test checks docs/api.md lists
# each one). Run failure codes inside events are the runner's (runner.failures).
ErrorCode = Literal[
    # platform, any route
    "invalid_json", "invalid_request", "not_authenticated", "invalid_token", "forbidden",
    "not_found", "method_not_allowed", "not_acceptable", "unsupported_media_type",
    "payload_too_large", "throttled", "request_header_fields_too_large", "internal_error",
    "service_unavailable", "request_timeout",
    # projects' self-administration (kionga.projects)
    "already_member", "last_admin", "invitation_not_pending", "resource_exists",
    "resource_in_use",
    # designs
    "invalid_document", "stale_revision", "validation_failed", "quality_gate", "staff_gate",
    # runs
    "runner_not_configured", "runner_at_capacity", "project_run_quota", "parked_run_quota",
    "idempotency_mismatch", "idempotency_in_progress", "run_not_active", "too_many_streams",
    "streams_at_capacity",
    # deployed agents' turns (runs/lost_turns.py) and their callers' keys
    "turn_lost", "invalid_api_key",
    # approvals
    "approval_not_pending",
    # evaluations
    "evaluation_not_active", "case_not_finished",
    # deployments
    "runtime_not_configured", "project_deploy_quota", "no_previous_version", "hash_mismatch",
    "invalid_canary_percent", "no_agent", "canary_same_version", "no_canary",
    # agents' triggers (triggers/): webhook deliveries, turns a trigger opened
    "invalid_signature", "signature_expired", "trigger_disabled", "turn_claimed",
    # internal listener (run credentials)
    "invalid_credential", "run_cancelled", "resource_denied", "side_effects_not_allowed",
    "resource_unavailable", "upstream_rejected", "tool_failed",
]
ERROR_CODES: frozenset[str] = frozenset(get_args(ErrorCode))

# Fallback code per HTTP status, for errors that carry no code of their own.
STATUS_CODES: dict[int, ErrorCode] = {
    400: "invalid_request",
    401: "not_authenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    408: "request_timeout",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "throttled",
    431: "request_header_fields_too_large",
    500: "internal_error",
    503: "service_unavailable",
}



def code_for_status(status: int) -> ErrorCode:
    """The catalogue's code for an error that carries none of its own."""
    return STATUS_CODES.get(status, "invalid_request" if status < 500 else "internal_error")

INVALID = "The request is invalid."

# Order matters: subclasses before their bases.
_DRF_CODES: list[tuple[type[drf.APIException], ErrorCode]] = [
    (drf.ParseError, "invalid_json"),
    (drf.ValidationError, "invalid_request"),
    (drf.NotAuthenticated, "not_authenticated"),
    (drf.AuthenticationFailed, "invalid_token"),
    (drf.PermissionDenied, "forbidden"),
    (drf.NotFound, "not_found"),
    (drf.MethodNotAllowed, "method_not_allowed"),
    (drf.NotAcceptable, "not_acceptable"),
    (drf.UnsupportedMediaType, "unsupported_media_type"),
    (drf.Throttled, "throttled"),
]


class APIError(drf.APIException):
    """An error with an explicit status and code, e.g. ``APIError(409, "stale_revision", ...)``;
    `retry_after` (seconds) is sent as Retry-After."""

    def __init__(
        self, status: int, code: ErrorCode, message: str,
        details: dict[str, Any] | None = None, *, retry_after: int | None = None
    ) -> None:
        super().__init__(detail=message, code=code)
        self.status_code = status
        self.code = code
        self.message = message
        self.details = details or {}
        # The attribute DRF's Throttled has: error_headers renders both alike.
        self.wait = retry_after


def invalid_field(path: str, message: str) -> APIError:
    """400 invalid_request for one field, in the shape a serializer's errors take:
    details ``{"fields": {path: [message]}}`` (path like ``history.0.role``)."""
    return APIError(400, "invalid_request", _one_line(path, message),
                    {"fields": {path: [message]}})


def not_found(message: str = "Not found.") -> APIError:
    return APIError(404, "not_found", message)


def forbidden(message: str = "You do not have permission to do this.") -> APIError:
    return APIError(403, "forbidden", message)


def error_body(code: ErrorCode, message: str,
               details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def error_response(
    status: int, code: ErrorCode, message: str, details: dict[str, Any] | None = None
) -> JsonResponse:
    """The error shape for plain Django views and middleware."""
    return JsonResponse(error_body(code, message, details), status=status)


def api_error_response(exc: drf.APIException) -> JsonResponse:
    """error_response for an APIError (or DRF's own refusals, a 429 included), with the
    headers the DRF handler would add."""
    code, message, details = describe(exc)
    response = error_response(exc.status_code, code, message, details)
    for name, value in error_headers(exc).items():
        response[name] = value
    return response


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF EXCEPTION_HANDLER. Returns None for unexpected errors so they reach handler500."""
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        exc = APIError(413, "payload_too_large", f"The body is larger than {limit} bytes.")
    elif isinstance(exc, Http404):
        exc = drf.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = drf.PermissionDenied()
    if not isinstance(exc, drf.APIException):
        return None
    code, message, details = describe(exc)
    set_rollback()
    body = error_body(code, message, details)
    return Response(body, status=exc.status_code, headers=error_headers(exc))


def describe(exc: drf.APIException) -> tuple[ErrorCode, str, dict[str, Any]]:
    if isinstance(exc, APIError):
        return exc.code, exc.message, exc.details
    if isinstance(exc, drf.ValidationError):
        fields = field_errors(exc.detail)
        path, messages = next(iter(fields.items()))
        return "invalid_request", _one_line(path, messages[0]), {"fields": fields}
    code = next((c for cls, c in _DRF_CODES if isinstance(exc, cls)), None)
    return code or code_for_status(exc.status_code), str(exc.detail), {}


def error_headers(exc: drf.APIException) -> dict[str, str]:
    # Same headers DRF's default handler sets; 401 needs WWW-Authenticate.
    headers: dict[str, str] = {}
    auth_header = getattr(exc, "auth_header", None)
    if auth_header:
        headers["WWW-Authenticate"] = auth_header
    wait = getattr(exc, "wait", None)
    if wait:
        headers["Retry-After"] = str(int(wait))
    return headers


def field_errors(detail: Any, path: str = "") -> dict[str, list[str]]:
    """A serializer's nested errors as ``{"history.0.role": [messages]}``.

    Errors of the whole body (not a JSON object, ``validate()``) are under DRF's
    ``non_field_errors``. Never empty: a detail without messages still says why.
    """
    found: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            found.update(field_errors(value, f"{path}.{key}" if path else str(key)))
    elif isinstance(detail, list) and any(isinstance(d, (dict, list)) for d in detail):
        # A list serializer's errors: one entry per item, {} for a valid one.
        for index, item in enumerate(detail):
            if item:
                found.update(field_errors(item, f"{path}.{index}" if path else str(index)))
    else:
        messages = [str(m) for m in (detail if isinstance(detail, list) else [detail])]
        found[path or api_settings.NON_FIELD_ERRORS_KEY] = messages or [INVALID]
    return found or {path or api_settings.NON_FIELD_ERRORS_KEY: [INVALID]}


def _one_line(path: str, message: str) -> str:
    """The error's message: ``name: This field is required.``."""
    return message if path == api_settings.NON_FIELD_ERRORS_KEY else f"{path}: {message}"
