"""The one strict reader of configuration variables, for the gateway and the runner.

Every reader fails loudly on a malformed value (a typo in DEBUG must not silently
mean "false"), naming the variable, and honours a `NAME_FILE` variant so secrets
can be mounted as files (Docker/Kubernetes secrets) instead of plain variables.
Pure (no Django): the runner holds no gateway settings, and the gateway's settings
module reads through the same class.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

_BOOLEANS: dict[str, bool] = {**dict.fromkeys(("1", "true", "yes", "on"), True),
                               **dict.fromkeys(("0", "false", "no", "off"), False)}
T = TypeVar("T")


class EnvError(ValueError):
    """A configuration variable is missing or unusable: the process must not start."""


class Env:
    """Typed reads of `environ` (the process environment when None, read at each call)."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = os.environ if environ is None else environ

    def raw(self, name: str) -> str | None:
        """The value of NAME, or the contents of the file named by NAME_FILE."""
        file_name = self._environ.get(f"{name}_FILE")
        if file_name:
            try:
                # Secret files usually end with a newline the secret does not contain.
                return Path(file_name).read_text(encoding="utf-8").rstrip("\r\n")
            except OSError as exc:
                raise EnvError(f"{name}_FILE={file_name!r} cannot be read: {exc}") from None
        return self._environ.get(name)

    def text(self, name: str, default: str = "") -> str:
        value = self.raw(name)
        return default if value is None else value

    def parsed(self, name: str, default: T, convert: Callable[[str], T | None],
               what: str) -> T:
        """default when NAME is unset or blank; else convert(value), refused naming `what`
        when convert raises ValueError or answers None (the typed readers below, and the
        gateway's own kinds of value, e.g. Kubernetes quantities)."""
        value = (self.raw(name) or "").strip()
        if not value:
            return default
        try:
            converted = convert(value)
        except ValueError:
            converted = None
        if converted is None:
            raise EnvError(f"{name} must be {what}, got {value!r}")
        return converted

    def integer(self, name: str, default: int, *,
                within: tuple[int, int] | None = None) -> int:
        """An integer, and when `within` is given, between its two ends (inclusive)."""
        number = self.parsed(name, default, int, "an integer")
        if within is not None and not within[0] <= number <= within[1]:
            raise EnvError(f"{name} must be between {within[0]} and {within[1]}, got {number}")
        return number

    def seconds(self, name: str, default: float) -> float:
        """A positive, finite number of seconds."""
        number = self.parsed(name, default, float, "a number of seconds")
        if not math.isfinite(number) or number <= 0:
            raise EnvError(f"{name} must be a positive number of seconds, got {number!r}")
        return number

    def boolean(self, name: str, default: bool) -> bool:
        return self.parsed(name, default, lambda value: _BOOLEANS.get(value.lower()),
                           "one of 1/0/true/false/yes/no/on/off")

    def strings(self, name: str, default: Sequence[str] = ()) -> list[str]:
        """A JSON array of strings, one item per line, or comma-separated (in that order).

        Items such as the regex `\\d{3,5}` contain commas: write them one per line or
        as JSON. Blank items are dropped, so trailing commas are harmless.
        """
        value = self.raw(name)
        if value is None:
            return list(default)
        if value.lstrip().startswith("["):
            return _json_strings(name, value)
        separator = "\n" if "\n" in value else ","
        return [item.strip() for item in value.split(separator) if item.strip()]


def _json_strings(name: str, value: str) -> list[str]:
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        raise EnvError(f"{name} is not a valid JSON array: {exc}") from None
    if not isinstance(parsed, list) or not all(isinstance(item, str) for item in parsed):
        raise EnvError(f"{name} must be a JSON array of strings")
    return parsed
