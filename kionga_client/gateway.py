"""HTTP to a Kionga gateway: one place that turns transport failures and the gateway's
`{"error": {...}}` answers into the interface's stable codes (`errors.CODES`)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Any

import httpx

from kionga_client import __version__
from kionga_client.errors import KiongaError

DEFAULT_URL = "http://127.0.0.1:8000"
# Pages of the gateway's web UI under its base URL, where people act: the approver UI's
# page of one request (`approver:detail`, approvals/web_urls.py) and a design's canvas
# (`designer:design`, designer/urls.py). Tests check them against those routes.
APPROVER_PAGE = "/approvals/{approval_id}/"
DESIGNER_PAGE = "/designer/designs/{design_id}/"

# The gateway's code (or HTTP status) → ours. 404 is per request (what was not found).
_BY_CODE: dict[str, str] = {
    "invalid_token": "AUTH_REFUSED", "not_authenticated": "AUTH_REFUSED",
    "forbidden": "FORBIDDEN", "staff_gate": "FORBIDDEN", "stale_revision": "STALE_REVISION",
    "quality_gate": "QUALITY_GATE", "runner_at_capacity": "AT_CAPACITY",
    "project_run_quota": "AT_CAPACITY", "throttled": "THROTTLED",
    "runner_not_configured": "RUNNER_NOT_CONFIGURED",
    "service_unavailable": "SERVICE_UNAVAILABLE", "streams_at_capacity": "AT_CAPACITY",
    "too_many_streams": "AT_CAPACITY", "run_not_active": "RUN_NOT_ACTIVE",
    "validation_failed": "GRAPH_INVALID", "invalid_document": "GRAPH_INVALID",
    "payload_too_large": "GRAPH_INVALID", "invalid_request": "USAGE",
    "invalid_json": "USAGE", "idempotency_mismatch": "USAGE",
    "idempotency_in_progress": "AT_CAPACITY", "approval_not_pending": "FORBIDDEN",
    "no_previous_version": "NO_PREVIOUS_VERSION", "hash_mismatch": "HASH_MISMATCH",
    "no_canary": "NO_CANARY", "canary_same_version": "CANARY_SAME_VERSION",
    "invalid_canary_percent": "USAGE",
}


TOKEN_ENV = "KIONGA_TOKEN"
TOKEN_FILE_ENV = "KIONGA_TOKEN_FILE"
# Permission bits a token file must not have: any access by its group or by others.
SHARED_MODE_BITS = 0o077


@dataclass(frozen=True)
class Settings:
    url: str
    token: str | None
    timeout: float = 30.0

    @classmethod
    def from_env(cls, url: str | None = None, token_file: str | None = None) -> Settings:
        """The gateway and token: the token from `token_file` (or KIONGA_TOKEN_FILE), else
        from KIONGA_TOKEN. Never from an argument's value, which `ps` shows to everyone."""
        token_file = token_file or os.environ.get(TOKEN_FILE_ENV) or None
        token = (read_token_file(token_file) if token_file is not None
                 else os.environ.get(TOKEN_ENV) or None)
        return cls(url=(url or os.environ.get("KIONGA_URL") or DEFAULT_URL).rstrip("/"),
                   token=token)


def read_token_file(path: str) -> str:
    """The token a file holds (surrounding whitespace dropped), if only its owner may
    read or change it; else USAGE saying how to fix it."""
    try:
        with open(path, encoding="utf-8") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            if os.name == "posix" and mode & SHARED_MODE_BITS:
                raise KiongaError(
                    "USAGE", f"The token file {path} is open to others (mode "
                    f"{stat.S_IMODE(mode):04o}); a token must be readable by you alone.",
                    hint=f"Run: chmod 600 {path}")
            token = handle.read().strip()
    except OSError as exc:
        raise KiongaError("USAGE", f"Cannot read the token file {path}: "
                          f"{exc.strerror}.") from exc
    except UnicodeDecodeError as exc:
        raise KiongaError("USAGE", f"The token file {path} is not UTF-8 text.") from exc
    if not token:
        raise KiongaError("USAGE", f"The token file {path} is empty.")
    return token


def graph_issue_code(issues: list[dict[str, Any]]) -> str:
    """SCHEMA_TOO_NEW when the graph asks for a newer schema_version, else GRAPH_INVALID."""
    for issue in issues:
        if issue.get("code") == "unsupported_schema_version" and "schema_version" in str(
                issue.get("path", "")) and _newer(issue.get("message", "")):
            return "SCHEMA_TOO_NEW"
    return "GRAPH_INVALID"


def _newer(message: str) -> bool:
    # "schema_version 3 is not supported; use 2." — newer only for an integer above 2.
    words = message.split()
    return len(words) > 1 and words[1].isdigit() and int(words[1]) > 2


class Gateway:
    """A client of one gateway as one token's owner: no rights beyond the token's."""

    def __init__(self, settings: Settings, transport: httpx.BaseTransport | None = None) -> None:
        self.settings = settings
        headers = {"User-Agent": f"kionga-cli/{__version__}", "Accept": "application/json"}
        if settings.token:
            headers["Authorization"] = f"Bearer {settings.token}"
        self.http = httpx.Client(base_url=settings.url, headers=headers,
                                 timeout=settings.timeout, transport=transport)

    def close(self) -> None:
        self.http.close()

    def request(self, method: str, path: str, *, json: Any = None,
                params: dict[str, Any] | None = None, not_found: str = "NOT_FOUND",
                headers: dict[str, str] | None = None) -> Any:
        return self.exchange(method, path, json=json, params=params, not_found=not_found,
                             headers=headers)[1]

    def exchange(self, method: str, path: str, *, json: Any = None,
                 params: dict[str, Any] | None = None, not_found: str = "NOT_FOUND",
                 headers: dict[str, str] | None = None) -> tuple[int, Any]:
        """(the HTTP status, the JSON answer) of a successful request; else its error."""
        self.check_token()
        try:
            response = self.http.request(method, "/api/v1" + path, json=json,
                                         params=_clean(params), headers=headers)
        except httpx.TransportError as exc:
            raise self.unreachable(exc) from exc
        if response.is_success:  # a 204 has no body
            return response.status_code, response.json() if response.content else None
        raise error_of(response, not_found)

    def approver_page(self, approval_id: str) -> str:
        """Where a person decides this approval request (the approver web UI)."""
        return self.settings.url + APPROVER_PAGE.format(approval_id=approval_id)

    def designer_page(self, design_id: str) -> str:
        """The design's canvas (its test cases, evaluations and publish panel too)."""
        return self.settings.url + DESIGNER_PAGE.format(design_id=design_id)

    def check_token(self) -> None:
        if not self.settings.token:
            raise KiongaError("AUTH_REFUSED", "No token: set KIONGA_TOKEN, or KIONGA_TOKEN_FILE "
                              "(--token-file) to a file only you can read.")

    def unreachable(self, exc: httpx.TransportError) -> KiongaError:
        if isinstance(exc, httpx.TimeoutException):
            return KiongaError("GATEWAY_UNREACHABLE",
                               f"The gateway at {self.settings.url} did not answer in time "
                               f"({type(exc).__name__}).")
        return KiongaError("GATEWAY_UNREACHABLE",
                           f"The gateway at {self.settings.url} cannot be reached: {exc}")


def error_of(response: httpx.Response, not_found: str = "NOT_FOUND") -> KiongaError:
    try:
        body = response.json().get("error") or {}
    except ValueError:
        body = {}
    gateway_code = str(body.get("code") or "")
    message = str(body.get("message") or f"HTTP {response.status_code}")
    details = body.get("details") if isinstance(body.get("details"), dict) else {}
    if response.status_code == 404:
        code = not_found
    elif gateway_code in _BY_CODE:
        code = _BY_CODE[gateway_code]
    elif response.status_code in (401,):
        code = "AUTH_REFUSED"
    elif response.status_code >= 500:
        code = "GATEWAY_ERROR"
    else:
        code = "USAGE"
    issues = details.get("issues") if isinstance(details, dict) else None
    if code == "GRAPH_INVALID" and isinstance(issues, list):
        code = graph_issue_code(issues)
    return KiongaError(code, message, data={"issues": issues} if issues is not None else None,
                       details={"gateway_code": gateway_code, **(details or {})}
                       if gateway_code else dict(details or {}))


def _clean(params: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if params is None else {k: v for k, v in params.items() if v is not None}
