"""Document-level checks: the body's shape, schema_version, name and settings."""

from __future__ import annotations

from typing import Any, Final

from contracts.issues import Issue, error, quote
from contracts.registry import SETTINGS_RANGES

_SETTING_NAMES: Final = ", ".join(SETTINGS_RANGES)


def check_document_shape(body: Any) -> list[Issue]:
    """`invalid_document` issues for a body the API must answer with a 400.

    Only a body that is not a JSON object, or has no `nodes`/`edges` arrays, is
    refused outright; every other problem is an issue in a 200 report.
    """
    if not isinstance(body, dict):
        return [error("invalid_document", "The graph must be a JSON object.")]
    return [
        error("invalid_document", f"The graph needs a {key!r} array.", key)
        for key in ("nodes", "edges")
        if not isinstance(body.get(key), list)
    ]


def check_schema_version(doc: dict[str, Any]) -> Issue | None:
    """None for version 1 (no schema_version) or 2; otherwise why not."""
    version = doc.get("schema_version", 1)
    # bool is an int subclass in Python; `true` is not a version.
    if type(version) is int and version in (1, 2):
        return None
    return error(
        "unsupported_schema_version",
        f"schema_version {_describe(version)} is not supported; use 2.",
        "schema_version",
    )


def check_name(doc: dict[str, Any]) -> list[Issue]:
    name = doc.get("name")
    if name is None or isinstance(name, str):
        return []
    return [error("wrong_type", "name must be a string.", "name")]


def check_settings(doc: dict[str, Any]) -> list[Issue]:
    """max_steps, timeout_seconds, max_tokens: optional integers within their ranges."""
    settings = doc.get("settings")
    if settings is None:
        return []
    if not isinstance(settings, dict):
        return [error("invalid_setting", "settings must be an object.", "settings")]
    issues = []
    for key, value in settings.items():
        problem = _setting_problem(key, value)
        if problem:
            issues.append(error("invalid_setting", problem, f"settings.{key}"))
    return issues


def _setting_problem(key: str, value: Any) -> str | None:
    limits = SETTINGS_RANGES.get(key)
    if limits is None:
        return f"There is no setting {quote(key)}; the settings are {_SETTING_NAMES}."
    if value is None:  # null means "use the default"
        return None
    lo, hi, _default = limits
    # bool is an int subclass in Python, but `true` is not a number of steps.
    if type(value) is not int:
        return f"{key} must be a whole number from {lo} to {hi}."
    if not lo <= value <= hi:
        return f"{key} must be from {lo} to {hi}; it is {_describe(value)}."
    return None


def _describe(value: Any) -> str:
    """A value for a message without printing (or even formatting) anything huge."""
    if isinstance(value, str):
        return quote(value)
    if type(value) is int and abs(value) < 10**15:
        return str(value)
    return f"(a JSON {_json_type(value)})"


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null" if value is None else type(value).__name__
