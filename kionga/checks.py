"""System checks: bad configuration fails ``manage.py check`` (and startup) with a clear message."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning, register


@register()
def check_secret_patterns(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    import re2  # Redaction uses RE2 (linear time), so validate with RE2 syntax.

    options = re2.Options()
    options.log_errors = False  # We report the error ourselves.
    errors: list[CheckMessage] = []
    for pattern in settings.KIONGA_SECRET_PATTERNS:
        try:
            re2.compile(pattern, options)
        except re2.error as exc:
            message = f"KIONGA_SECRET_PATTERNS: {pattern} is not valid RE2: {_reason(exc)}"
            errors.append(Error(message, id="kionga.E001"))
    return errors


def _reason(exc: Exception) -> str:
    # re2 reports its reason as bytes.
    reason = exc.args[0] if exc.args else exc
    return reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)


@register()
def check_limits(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    if settings.KIONGA_DESIGNER_MAX_RUNS < 1:
        errors.append(Error("KIONGA_DESIGNER_MAX_RUNS must be at least 1.", id="kionga.E002"))
    if settings.KIONGA_RUN_RETENTION_DAYS < 1:
        errors.append(Error("KIONGA_RUN_RETENTION_DAYS must be at least 1.", id="kionga.E003"))
    return errors


@register(deploy=True)
def check_secret_key(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    if settings.SECRET_KEY == settings.DEV_SECRET_KEY:
        return [Warning("DJANGO_SECRET_KEY is the development default.", id="kionga.W001")]
    return []


@register()
def check_runner_token(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    # The runner refuses tokens under 16 characters; catch the mismatch on the gateway too.
    token = settings.KIONGA_AGENT_DESIGNER_RUNNER_TOKEN
    if settings.KIONGA_AGENT_DESIGNER_RUNNER_URL and len(token) < 16:
        return [
            Error(
                "KIONGA_AGENT_DESIGNER_RUNNER_TOKEN must be at least 16 characters "
                "when KIONGA_AGENT_DESIGNER_RUNNER_URL is set.",
                id="kionga.E004",
            )
        ]
    return []


@register()
def check_egress_allow(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    from kionga.egress import parse_allow

    try:
        parse_allow(settings.KIONGA_EGRESS_ALLOW)
    except ValueError as exc:
        return [Error(str(exc), id="kionga.E005")]
    return []
