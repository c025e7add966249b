"""Strict, typed readers for configuration from the environment.

Every reader fails loudly on a malformed value (a typo in DEBUG must not
silently mean "false"), and honours a ``NAME_FILE`` variant so secrets can be
mounted as files (Docker/Kubernetes secrets) instead of plain variables.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


class EnvError(ValueError):
    """A configuration variable is present but unusable."""


def _raw(name: str) -> str | None:
    """The raw value of NAME, or the contents of the file named by NAME_FILE."""
    file_name = os.environ.get(f"{name}_FILE")
    if file_name:
        try:
            # Secret files usually end with a newline the secret does not contain.
            return Path(file_name).read_text(encoding="utf-8").rstrip("\r\n")
        except OSError as exc:
            raise EnvError(f"{name}_FILE={file_name!r} cannot be read: {exc}") from exc
    return os.environ.get(name)


def env_str(name: str, default: str = "") -> str:
    value = _raw(name)
    return default if value is None else value


def env_int(name: str, default: int) -> int:
    value = _raw(name)
    if value is None or value.strip() == "":
        return default
    try:
        return int(value.strip())
    except ValueError:
        raise EnvError(f"{name} must be an integer, got {value!r}") from None


def env_bool(name: str, default: bool) -> bool:
    value = _raw(name)
    if value is None or value.strip() == "":
        return default
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise EnvError(f"{name} must be one of 1/0/true/false/yes/no/on/off, got {value!r}")


def env_list(name: str, default: list[str] | None = None) -> list[str]:
    """A JSON array of strings, or a comma-separated list.

    JSON is accepted because some items (regexes such as ``\\d{3,5}``) contain
    commas; in the comma form empty items are dropped so trailing commas are harmless.
    """
    value = _raw(name)
    if value is None:
        return list(default or [])
    if value.lstrip().startswith("["):
        return _json_list(name, value)
    return [item.strip() for item in value.split(",") if item.strip()]


def _json_list(name: str, value: str) -> list[str]:
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        raise EnvError(f"{name} is not a valid JSON array: {exc}") from None
    if not isinstance(parsed, list) or not all(isinstance(item, str) for item in parsed):
        raise EnvError(f"{name} must be a JSON array of strings")
    return parsed
