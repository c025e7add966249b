"""Who uses a resource: apps above the platform register a finder here (the platform
imports no app). designs registers the published versions whose graphs name it, so a
resource a published version needs cannot be deleted from under it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kionga.models import Project

# (project, kind, resource id) -> the users found, e.g. [{"type": "version", "id": ...}]
UsageFinder = Callable[[Project, str, str], list[dict[str, Any]]]

_FINDERS: list[UsageFinder] = []


def register(finder: UsageFinder) -> None:
    if finder not in _FINDERS:
        _FINDERS.append(finder)


def users_of(project: Project, kind: str, resource_id: str) -> list[dict[str, Any]]:
    return [found for finder in _FINDERS for found in finder(project, kind, resource_id)]
