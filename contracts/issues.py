"""Validation issues: the shape every report, 400 and `validation_failed` answer uses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Severity = Literal["error", "warning"]


# Treat an Issue as immutable. It is not a frozen dataclass because constructing a
# frozen one is four times slower, and a report can hold thousands of issues.
@dataclass(slots=True, unsafe_hash=True)
class Issue:
    severity: Severity
    code: str
    message: str
    path: str | None = None
    node_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
        }
        if self.path is not None:
            doc["path"] = self.path
        if self.node_id is not None:
            doc["node_id"] = self.node_id
        return doc


def error(code: str, message: str, path: str | None = None, node_id: str | None = None) -> Issue:
    return Issue("error", code, message, path, node_id)


def warning(code: str, message: str, path: str | None = None, node_id: str | None = None) -> Issue:
    return Issue("warning", code, message, path, node_id)


def quote(value: str, limit: int = 40) -> str:
    """A user-supplied string for a message: quoted, and cut short so messages stay small."""
    return repr(value if len(value) <= limit else value[:limit] + "…")
