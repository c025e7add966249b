"""Config checks of one node: keys, string values, lengths and each setting's format.

Config values are strings (the graph document says so). An empty string means "use
the default", so it is never checked against a format, and a required setting that
is empty counts as missing. An optional one the node does nothing useful without
(`when_empty` in the registry) gets a warning saying what the node will do.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

from contracts.conditions import ConditionError, parse_condition
from contracts.issues import Issue, error, quote, warning
from contracts.registry import COMPONENTS, LIMITS, Component, Setting

# Looked up once per config key, so build the name → setting maps once.
_SETTINGS: Final[dict[str, dict[str, Setting]]] = {
    kind: {s.name: s for s in comp.settings} for kind, comp in COMPONENTS.items()
}
_REQUIRED: Final[dict[str, tuple[Setting, ...]]] = {
    kind: tuple(s for s in comp.settings if s.required) for kind, comp in COMPONENTS.items()
}
# Optional settings a node does nothing useful without: warned about when empty.
_WARN_WHEN_EMPTY: Final[dict[str, tuple[Setting, ...]]] = {
    kind: tuple(s for s in comp.settings if s.when_empty) for kind, comp in COMPONENTS.items()
}
_KNOWN: Final[dict[str, str]] = {
    kind: ", ".join(names) or "none" for kind, names in _SETTINGS.items()
}
_UNKNOWN_KEY_MESSAGES: Final[dict[str, dict[str, str]]] = {kind: {} for kind in COMPONENTS}
_MAX_KEYS: Final = LIMITS["max_config_keys"]
_MAX_CHARS: Final = LIMITS["max_config_value_chars"]
_INTEGER: Final = re.compile(r"-?[0-9]+")

# (code, message) of a bad value, or None when the value is fine.
Problem = tuple[str, str] | None


def check_config(
    index: int,
    node_id: str,
    component: Component,
    raw: dict[str, Any],
    config: dict[str, Any],
    issues: list[Issue],
) -> None:
    """Check `config` (normalized) of node `index`; `raw` is the submitted config."""
    base = f"nodes.{index}.config"
    # Count what was submitted: normalization may add `model`.
    if len(raw) > _MAX_KEYS:
        issues.append(error(
            "too_many_config_keys",
            f"A node has at most {_MAX_KEYS} config keys; this one has {len(raw)}.",
            base,
            node_id,
        ))
    kind = component.kind
    settings = _SETTINGS[kind]
    messages = _UNKNOWN_KEY_MESSAGES[kind]
    prefix = base + "."
    append = issues.append
    for key, value in config.items():
        setting = settings.get(key)
        if setting is None:
            # The hot path of a graph full of stray keys: kept inline and cached.
            message = messages.get(key) or _unknown_key_message(kind, key)
            append(Issue("error", "unknown_config_key", message, prefix + key, node_id))
            continue
        problem = _check_entry(component, setting, value)
        if problem is not None:
            issues.append(error(problem[0], problem[1], prefix + key, node_id))
    for setting in _REQUIRED[component.kind]:
        if config.get(setting.name, "") == "":
            issues.append(error(
                "missing_required_config",
                f"{component.label} needs {setting.label} ({setting.name}).",
                f"{base}.{setting.name}",
                node_id,
            ))
    for setting in _WARN_WHEN_EMPTY[component.kind]:
        if config.get(setting.name, "") == "":
            issues.append(warning(
                "missing_optional_config",
                f"{component.label} node {quote(node_id)} has no {setting.label} "
                f"({setting.name}): it {setting.when_empty}.",
                f"{base}.{setting.name}",
                node_id,
            ))


def _unknown_key_message(kind: str, key: str) -> str:
    label = COMPONENTS[kind].label
    message = f"{label} has no setting {quote(key)}; its settings are: {_KNOWN[kind]}."
    # The same stray keys tend to repeat on many nodes. Keys are user input, so
    # the cache holds only short ones, and only so many.
    cache = _UNKNOWN_KEY_MESSAGES[kind]
    if len(key) <= 64 and len(cache) < 256:
        cache[key] = message
    return message


def _check_entry(component: Component, setting: Setting, value: Any) -> Problem:
    if not isinstance(value, str):
        return "config_value_not_string", f"{setting.label} must be a string."
    if len(value) > _MAX_CHARS:
        return (
            "config_value_too_long",
            f"{setting.label} has {len(value)} characters; at most {_MAX_CHARS}.",
        )
    if value == "":
        return None
    return _check_format(component.kind, setting, value)


def _check_format(kind: str, setting: Setting, value: str) -> Problem:
    if setting.type == "integer":
        return _check_integer(setting, value)
    if setting.type == "choice" and value not in setting.choices:
        allowed = ", ".join(setting.choices)
        return "invalid_config_value", f"{setting.label} must be one of {allowed}."
    if setting.type == "condition":
        try:
            parse_condition(value)
        except ConditionError as exc:
            return exc.code, f"{setting.label}: {exc}"
    check = _FORMATS.get((kind, setting.name))
    return check(setting, value) if check else None


def _check_integer(setting: Setting, value: str) -> Problem:
    lo, hi = setting.minimum, setting.maximum
    bounds = f" from {lo} to {hi}" if lo is not None and hi is not None else ""
    if not _INTEGER.fullmatch(value):
        return "invalid_config_value", f"{setting.label} must be a whole number{bounds}."
    # Long digit strings are out of any range; int() would refuse over 4,300 digits.
    number = int(value) if len(value) <= 12 else None
    if (
        number is None
        or (lo is not None and number < lo)
        or (hi is not None and number > hi)
    ):
        return "invalid_config_value", f"{setting.label} must be{bounds}; it is {quote(value)}."
    return None


def _check_extract_path(setting: Setting, value: str) -> Problem:
    """Dotted keys and list indexes (`items.0.name`); every segment must be non-empty."""
    if "" in value.split("."):
        return (
            "invalid_config_value",
            f"{setting.label} {quote(value)} has an empty segment; write keys and list "
            "indexes separated by single dots, like items.0.name.",
        )
    return None


# Formats of plain string settings that the registry cannot express by type.
_FORMATS: Final[dict[tuple[str, str], Callable[[Setting, str], Problem]]] = {
    ("extract", "path"): _check_extract_path,
}
