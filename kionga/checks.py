"""System checks: bad configuration fails ``manage.py check`` (and startup) with a clear message."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register

from kionga.models import Role
from runner.redact import pattern_problems


@register()
def check_secret_patterns(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    # The runner's redactor compiles them with RE2: validate with the same engine.
    return [Error(f"KIONGA_SECRET_PATTERNS: {pattern} is not valid RE2: {reason}",
                  id="kionga.E001")
            for pattern, reason in pattern_problems(settings.KIONGA_SECRET_PATTERNS)]


@register()
def check_limits(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    if settings.KIONGA_DESIGNER_MAX_RUNS < 1:
        errors.append(Error("KIONGA_DESIGNER_MAX_RUNS must be at least 1.", id="kionga.E002"))
    if settings.KIONGA_RUN_RETENTION_DAYS < 1:
        errors.append(Error("KIONGA_RUN_RETENTION_DAYS must be at least 1.", id="kionga.E003"))
    if settings.KIONGA_PROJECT_MAX_RUNS < 0:
        errors.append(Error("KIONGA_PROJECT_MAX_RUNS must be 0 (half the runner's capacity) "
                            "or more.", id="kionga.E010"))
    for name in ("KIONGA_MAX_STREAMS_PER_USER", "KIONGA_MAX_STREAMS"):
        if getattr(settings, name) < 1:
            errors.append(Error(f"{name} must be at least 1.", id="kionga.E011"))
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


@register()
def check_secret_keys(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    from kionga import secret_box

    try:
        secret_box.configured_keys()
    except secret_box.SecretKeyError as exc:
        return [Error(str(exc), id="kionga.E012")]
    return []


@register(Tags.database)
def check_stored_secret_keys(app_configs: Any, databases: Any = None,
                             **kwargs: Any) -> list[CheckMessage]:
    # Run by `migrate` and `check --database default`: every stored secret's key is given.
    from kionga import secret_box
    from kionga.secret_storage import unknown_key_problems

    if not databases:
        return []
    try:
        return [Error(problem, id="kionga.E013") for problem in unknown_key_problems()]
    except secret_box.SecretKeyError:
        return []  # reported by check_secret_keys


@register()
def check_oidc(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    errors: list[CheckMessage] = [
        Error(f"KIONGA_OIDC_GROUP_ROLES: {entry.group}={entry.project}:{entry.role} names "
              f"no role; roles are {', '.join(Role.values)}.", id="kionga.E014")
        for entry in settings.KIONGA_OIDC_GROUP_ROLES if entry.role not in Role.values]
    if settings.KIONGA_OIDC_ISSUER and not (settings.OIDC_RP_CLIENT_ID
                                            and settings.OIDC_RP_CLIENT_SECRET):
        errors.append(Error("KIONGA_OIDC_ISSUER is set: KIONGA_OIDC_CLIENT_ID and "
                            "KIONGA_OIDC_CLIENT_SECRET are needed too.", id="kionga.E015"))
    return errors
