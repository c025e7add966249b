"""The stable error codes of the agent interface, each with its exit code and whether
retrying can help (agent-interface.md). Codes are only added within `kionga/1`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# code: (exit code, retryable, hint)
CODES: dict[str, tuple[int, bool, str]] = {
    "NODE_FAILED": (1, True, "Read the failed node's error; retry if it was transient."),
    "RUN_TIMEOUT": (1, True, "The run took longer than its timeout; retry or raise "
                             "settings.timeout_seconds."),
    "BUDGET_EXCEEDED": (1, False, "The run used up a budget (steps or tokens); raise "
                                  "the graph's settings."),
    "RUN_FAILED": (1, True, "The run failed for a technical reason; retry later."),
    "EVALUATION_FAILED": (1, False, "Some cases failed: read data.cases for each reason, "
                                    "fix the graph or the fixtures, and evaluate again."),
    "USAGE": (2, False, "See `kionga COMMAND --help`."),
    "CONFIRMATION_REQUIRED": (2, False, "Confirm with --yes (and --allow-side-effects "
                                        "for a graph with side effects)."),
    "APPROVAL_REJECTED": (3, False, "A person rejected the approval; do not retry."),
    "RUN_CANCELLED": (3, False, "The run was cancelled; do not retry."),
    "GRAPH_INVALID": (4, False, "Fix the issues listed in data.issues, then validate again."),
    "SCHEMA_TOO_NEW": (5, False, "Save the graph with schema_version 2."),
    "GATEWAY_UNREACHABLE": (6, True, "Check KIONGA_URL and that the gateway is up; "
                                     "retry later."),
    "AUTH_REFUSED": (6, False, "Check KIONGA_TOKEN (or the token file): the gateway "
                                "refused it."),
    "RUNNER_NOT_CONFIGURED": (6, True, "The gateway has no runner; retry later."),
    "SERVICE_UNAVAILABLE": (6, True, "A service behind the gateway is down; retry later."),
    "DESIGN_NOT_FOUND": (7, False, "List designs with `kionga designs list`."),
    "RUN_NOT_FOUND": (7, False, "Check the run_id (and --design); list a design's runs "
                                "with `kionga runs list --design ID`."),
    "VERSION_NOT_FOUND": (7, False, "List versions with `kionga versions list ID`."),
    "APPROVAL_NOT_FOUND": (7, False, "List approvals with `kionga approvals list`."),
    "EVALUATION_NOT_FOUND": (7, False, "Check the evaluation_id: `kionga evaluate ID` "
                                       "prints the one it starts."),
    "AGENT_NOT_FOUND": (7, False, "List agents with `kionga agents list`."),
    "TRIGGER_NOT_FOUND": (7, False, "List the agent's triggers with `kionga agents "
                                    "triggers list AGENT_ID`."),
    "TEMPLATE_NOT_FOUND": (7, False, "List templates with `kionga templates list`."),
    "NOT_FOUND": (7, False, "Check the id."),
    "AT_CAPACITY": (8, True, "The runner or your project's share is full; retry in a few "
                             "seconds."),
    "THROTTLED": (8, True, "Too many requests; wait and retry."),
    "QUALITY_GATE": (8, False, "Publishing needs a passing evaluation of the revision you "
                               "publish: `kionga evaluate ID --revision N`, then `kionga "
                               "publish ID --revision N --evaluation EVALUATION_ID`."),
    "STALE_REVISION": (8, False, "Someone saved a newer revision: read the design again "
                                 "and retry with its revision."),
    "FORBIDDEN": (8, False, "Your role in this project does not allow it."),
    "RUN_NOT_ACTIVE": (8, False, "The run has already ended."),
    "NO_PREVIOUS_VERSION": (8, False, "The agent has only ever run this version; deploy "
                            "another version instead."),
    "HASH_MISMATCH": (8, False, "The stored version does not match its published hash; "
                      "tell the operators, do not retry."),
    "NO_CANARY": (8, False, "The agent runs no canary: start one with `kionga agents "
                  "canary start AGENT_ID --version N --percent P`."),
    "CANARY_SAME_VERSION": (8, False, "The agent runs this version already; a canary is "
                                      "another version."),
    "GATEWAY_ERROR": (6, True, "The gateway answered with an error; retry later."),
    "INTERRUPTED": (130, False, "Interrupted."),
}


@dataclass
class KiongaError(Exception):
    """An operation's failure, with the envelope fields it becomes."""

    code: str
    message: str
    where: dict[str, Any] | None = None
    hint: str | None = None
    data: Any = None
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__init__(self.message)
        if self.code not in CODES:
            raise ValueError(f"unknown error code {self.code}")

    @property
    def exit_code(self) -> int:
        return CODES[self.code][0]

    @property
    def retryable(self) -> bool:
        return CODES[self.code][1]

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": self.message,
                                "hint": self.hint or CODES[self.code][2],
                                "retryable": self.retryable}
        if self.where:
            body["where"] = self.where
        if self.details:
            body["details"] = self.details
        return body
