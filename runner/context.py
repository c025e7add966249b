"""What a component sees: its node's config and the run's shared services."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from contracts.registry import COMPONENTS
from contracts.types import PortType
from runner.failures import NodeFailure

if TYPE_CHECKING:
    from runner.backends import ModelBackend
    from runner.clock import Clock
    from runner.events import Emitter
    from runner.redact import Redactor, StreamRedactor
    from runner.request import RunRequest, ScriptedApprovals
    from runner.resources import ResourceClient


@dataclass(slots=True)
class SubflowOutcome:
    output: str
    tokens: int


# (calling node id, version id, input text, the calling node's clock) -> the nested
# run's output; the nested run's clock stands still whenever its caller's must.
RunSubflow = Callable[[str, str, str, "Clock"], Awaitable[SubflowOutcome]]


@dataclass(slots=True, weakref_slot=True)
class RunContext:
    """Shared by every node of one run (nested runs get their own, sharing services).
    Its run_subflow refers back to it weakly (runner.engine), so a run's state is freed
    by reference counts when the run ends, not left to the cyclic collector."""

    request: RunRequest
    resources: ResourceClient
    backend: ModelBackend
    redactor: Redactor
    emitter: Emitter
    run_subflow: RunSubflow
    input: str  # the run's input (a nested run's is its caller's value)
    # Set to end the run (nested runs share their caller's): checked between nodes.
    cancel: asyncio.Event | None = None
    # How approvals resolve without people (an evaluation's run; a nested run gets its
    # calling node's decision), or None: they ask people.
    scripted_approvals: ScriptedApprovals | None = None


@dataclass(slots=True)
class NodeOutput:
    """A node's result: the port that fires and the value it carries (the port's type)."""

    port: str
    value: Any
    text: str | None = None  # model nodes: the full text, redacted into node.completed
    iterations: int | None = None  # map and loop
    tokens: int = 0
    reason: str | None = None  # approvals: approved, rejected or expired; reused (a re-run)
    cost: float = 0.0  # what the gateway billed for the node's model call (its records)


DELTAS_PER_YIELD = 64


@dataclass(slots=True)
class NodeContext:
    run: RunContext
    node_id: str
    kind: str
    config: dict[str, str]
    # The node's own timeout (an inline node: its run's), above it its run's: waiting
    # for a person stops them all (runner.clock).
    clock: Clock
    # Every inbound value, by source id: (source id, value, type) — join reads them all.
    inputs: list[tuple[str, Any, PortType]] = field(default_factory=list)
    attempt: int = 1
    stream: StreamRedactor | None = None
    deltas: int = 0  # pieces streamed: every DELTAS_PER_YIELD, the loop's other runs go

    def setting(self, name: str) -> str:
        """The configured value, or the registry default (normalize fills no defaults)."""
        value = self.config.get(name)
        if value is None or value == "":
            comp = COMPONENTS[self.kind].setting(name)
            return (comp.default if comp else None) or ""
        return value

    def int_setting(self, name: str) -> int:
        raw = self.setting(name).strip()
        spec = COMPONENTS[self.kind].setting(name)
        try:
            value = int(raw)
        except ValueError:
            raise NodeFailure("node_error", f"{name} must be a whole number, not {raw!r}") from None
        if spec and spec.minimum is not None and value < spec.minimum:
            raise NodeFailure("node_error", f"{name} must be at least {spec.minimum}")
        if spec and spec.maximum is not None and value > spec.maximum:
            raise NodeFailure("node_error", f"{name} must be at most {spec.maximum}")
        return value

    def required(self, name: str) -> str:
        value = self.setting(name)
        if not value.strip():
            raise NodeFailure("node_error", f"{self.kind} node {self.node_id} needs {name}")
        return value

    async def delta(self, text: str) -> None:
        """Stream a piece of model text as node.delta (redacted across chunk borders)."""
        if self.stream is not None:
            self.run.emitter.delta(self.node_id, self.attempt, self.stream.feed(text))
        self.deltas += 1
        if self.deltas % DELTAS_PER_YIELD == 0:
            # A stream read from a buffer (or the mock's) never suspends: yield now and
            # then, so one long answer does not hold the process's loop (runner.host).
            await asyncio.sleep(0)

    def flush_delta(self) -> None:
        if self.stream is not None:
            self.run.emitter.delta(self.node_id, self.attempt, self.stream.flush())
