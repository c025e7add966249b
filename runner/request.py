"""What a run is asked to do (RunRequest) and how it ended (RunResult)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    from runner.records import Reused

RunStatus = Literal["completed", "failed", "cancelled"]
ApprovalDecision = Literal["approve", "reject"]
APPROVAL_DECISIONS: Final[tuple[ApprovalDecision, ...]] = ("approve", "reject")
# An evaluation's case that says nothing about its approvals approves them all.
DEFAULT_APPROVAL_DECISION: Final[ApprovalDecision] = "approve"


@dataclass(frozen=True)
class ScriptedApprovals:
    """How approval nodes resolve in a run that must never reach people (an evaluation's
    case): no request is created, the node fires at once as if decided (no comment).
    `nodes` by node ID of the run's own graph, `default` for the others; an approval
    inside a subflow, map or loop resolves as its calling node's entry says."""

    default: ApprovalDecision = DEFAULT_APPROVAL_DECISION
    nodes: dict[str, ApprovalDecision] = field(default_factory=dict)

    def decision(self, node_id: str) -> ApprovalDecision:
        return self.nodes.get(node_id, self.default)

    def nested(self, node_id: str) -> ScriptedApprovals:
        """For the run a subflow, map or loop node `node_id` starts."""
        return ScriptedApprovals(self.decision(node_id))

    def to_json(self) -> dict[str, Any]:
        return {"default": self.default, "nodes": dict(self.nodes)}


@dataclass(frozen=True)
class LLMConfig:
    """The platform chat model behind `model: llm` (MLAIOPS_LLM_* on the runner).

    Passed in by the caller; the engine never reads Django settings or the
    environment itself.
    """

    backend: str = "mock"  # MLAIOPS_LLM_BACKEND: mock | openai
    model: str = ""  # MLAIOPS_LLM_MODEL
    base_url: str = ""  # MLAIOPS_LLM_BASE_URL, e.g. http://llm:8000/v1
    api_key: str = ""  # optional bearer key for the OpenAI-compatible server
    connect_timeout: float = 10.0
    read_timeout: float = 60.0


@dataclass
class RunRequest:
    """One run of a normalized graph (contracts.normalize(doc).graph).

    `subflows` maps published version IDs to their normalized graphs (the artifacts
    the gateway hands over); subflow, map and loop nodes run them. `subflow_hashes`
    holds each one's content_sha256: when given, every subflow must match its hash
    before any node runs (runner.artifacts).
    `secrets` are literal values to redact (resource secrets, the run credential);
    `secret_patterns` are regexes to redact.
    """

    graph: dict[str, Any]
    input: str = ""
    session_id: str | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    allow_side_effects: bool = False
    stop_after: str | None = None
    subflows: dict[str, dict[str, Any]] = field(default_factory=dict)
    subflow_hashes: dict[str, str] | None = None
    secrets: list[str] = field(default_factory=list)
    secret_patterns: list[str] = field(default_factory=list)
    llm: LLMConfig = field(default_factory=LLMConfig)
    # Set for an evaluation's runs: approvals resolve without asking anyone.
    scripted_approvals: ScriptedApprovals | None = None
    # A re-run (runs/replay.py): these nodes of the graph repeat their recorded
    # outcome (port and value) instead of running (runner.records).
    reuse: dict[str, Reused] = field(default_factory=dict)
    # Tuning, mostly for tests: per-kind node timeouts overriding the registry,
    # the pause before a retry, and how often a pending approval is polled.
    node_timeouts: dict[str, float] = field(default_factory=dict)
    retry_delay_seconds: float = 0.2
    # Half a second: a decision reaches the run (approval.resolved) within a second.
    approval_poll_seconds: float = 0.5


@dataclass
class RunResult:
    status: RunStatus
    output: str | None = None  # redacted, ≤ 64 KiB; None when the output node was skipped
    error: dict[str, str] | None = None  # {code, message}, redacted
    node_id: str | None = None  # the node at fault, when there is one
    reason: str | None = None  # node_failed, budget_exceeded, timeout, cancelled, ...
    usage: dict[str, int] = field(default_factory=lambda: {"tokens": 0})
    events: int = 0  # stored events emitted (node.delta excluded)
    steps: int = 0  # nodes that ran
