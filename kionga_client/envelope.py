"""The `kionga/1` envelope: one JSON document per command (agent-interface.md)."""

from __future__ import annotations

from typing import Any

from kionga_client import ENVELOPE_SCHEMA
from kionga_client.errors import KiongaError
from kionga_client.operations import Result


def success(command: str, result: Result) -> dict[str, Any]:
    return {"schema": ENVELOPE_SCHEMA, "command": command, "ok": True, "exit_code": 0,
            "data": result.data, "error": None, "warnings": result.warnings}


def failure(command: str, error: KiongaError,
            warnings: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {"schema": ENVELOPE_SCHEMA, "command": command, "ok": False,
            "exit_code": error.exit_code, "data": error.data, "error": error.as_dict(),
            "warnings": warnings or []}
