"""Failure codes and the exception components raise to report one."""

from __future__ import annotations

from typing import Final, Literal

FailureCode = Literal[
    "node_error",
    "timeout",
    "resource_denied",
    "resource_unavailable",
    "side_effects_not_allowed",
    "budget_exceeded",
    "cancelled",
]

# Only transient-looking failures are worth another attempt (reference, Execution).
RETRYABLE: Final = frozenset({"timeout", "node_error", "resource_unavailable"})

# Failures that may travel down a connected `error` port instead of failing the run.
# budget_exceeded and cancelled end the run no matter what is wired.
ERROR_PORT_CODES: Final = frozenset(
    {"node_error", "timeout", "resource_denied", "resource_unavailable",
     "side_effects_not_allowed"}
)


def http_failure_code(status: int) -> FailureCode:
    """What an error answer means for a node, from the gateway's resources and from a
    model server alike (runner/resources.py): refused, or worth another try, or not."""
    if status in (401, 403, 404):
        return "resource_denied"
    if status == 429 or status >= 500:
        return "resource_unavailable"
    return "node_error"


class NodeFailure(Exception):
    """A component failed; `code` is a FailureCode, `message` is for people."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

