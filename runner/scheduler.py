"""The scheduler loop: decide ready nodes in waves, run them, apply their outputs.

Nodes become ready when all their inbound edges have resolved. Ready nodes are
decided in waves, each wave in node-id order: a node is skipped when no inbound
edge carried a value (or, for join `all`, when one did not), or when it has no inbound
edge and its kind never runs on nothing (approval); otherwise it starts.
Pure components run inline; the others run as tasks, so independent branches
overlap and their events interleave. Nodes made ready by a completion join the
next wave, so nodes ready at the same time always start in node-id order.
Everything here follows the plan's per-node flags (runner.plan), never a node's kind.

Before each node starts, the run's cancel, its events (lost events stop the run:
side effects must not go on unseen) and its deadline are checked: pure nodes run
without yielding, so this is where a CPU-bound run notices any of them.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from dataclasses import dataclass
from typing import Any

from contracts.conversions import to_text
from contracts.types import PortType
from runner.budgets import BudgetExceeded, Budgets
from runner.clock import Clock
from runner.context import NodeContext, NodeOutput, RunContext
from runner.events import EVENTS_LOST
from runner.failures import ERROR_PORT_CODES, RETRYABLE, NodeFailure
from runner.plan import NodeSpec, Plan
from runner.records import Recorder, Reused
from runner.redact import StreamRedactor
from runner.state import Arrival, RunState

log = logging.getLogger(__name__)

Done = tuple[NodeSpec, NodeOutput | None, NodeFailure | None]

# node.completed's reason for a node whose recorded output a re-run repeated (no call).
REUSED = "reused"


@dataclass(slots=True)
class Ending:
    status: str  # completed | failed | cancelled
    output: str | None = None
    error: dict[str, str] | None = None
    node_id: str | None = None
    reason: str | None = None
    budget: str | None = None


def budget_ending(exceeded: BudgetExceeded) -> Ending:
    return Ending("failed", error={"code": "budget_exceeded", "message": exceeded.message},
                  reason="budget_exceeded", budget=exceeded.budget)


def timeout_ending(seconds: float) -> Ending:
    return Ending("failed", error={"code": "timeout", "message":
                                   f"the run took longer than timeout_seconds ({seconds:g} s)"},
                  reason="timeout", budget="timeout_seconds")


def events_lost_ending(why: str) -> Ending:
    return Ending("failed", error={"code": "node_error", "message": f"{why}; the run was stopped"},
                  reason=EVENTS_LOST)


class Scheduler:
    def __init__(self, plan: Plan, ctx: RunContext, budgets: Budgets,
                 stop_after: str | None = None, *, recorder: Recorder | None = None,
                 reuse: dict[str, Reused] | None = None) -> None:
        self.plan = plan
        self.ctx = ctx
        self.budgets = budgets
        self.stop_after = stop_after
        self.state = RunState(plan)
        self.emitter = ctx.emitter
        self.redactor = ctx.redactor
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.done: asyncio.Queue[Done] = asyncio.Queue()
        # Decided once, before any node starts: without allow_side_effects, nodes with
        # side effects fail (side_effects_not_allowed, their error port applies).
        self.blocked = frozenset() if ctx.request.allow_side_effects else plan.side_effects
        # Node records (runner.records) and a re-run's recorded outputs: the run's own
        # graph only (a nested run's node IDs mean nothing here).
        self.recorder = recorder or Recorder(None, ctx.redactor)
        self.reuse = reuse or {}
        self.attempts: dict[str, int] = {}

    async def run(self) -> Ending:
        try:
            return await self._loop()
        finally:
            await self._cancel_tasks()

    async def _loop(self) -> Ending:
        wave = list(self.plan.roots)
        while wave or self.tasks:
            if wave:
                wave.sort()
                following: list[str] = []
                for node_id in wave:
                    ending = self._decide(self.plan.nodes[node_id], following)
                    if ending is not None:
                        return ending
                wave = following
                # Let the process's other runs have the loop between waves (runner.host).
                await asyncio.sleep(0)
                continue
            finished = [await self.done.get()]
            while not self.done.empty():
                finished.append(self.done.get_nowait())
            for spec, out, failure in finished:
                self.tasks.pop(spec.id, None)
                ending = (self._completed(spec, out, wave) if out is not None
                          else self._failed(spec, failure or NodeFailure("node_error", "?"), wave))
                if ending is not None:
                    return ending
        state = self.state
        return Ending("completed", output=state.output if state.output_seen else None)

    def _decide(self, spec: NodeSpec, ready: list[str]) -> Ending | None:
        arrivals = self.state.inputs(spec.id)
        if _receives_nothing(spec, arrivals):
            self.emitter.event("node.skipped", node_id=spec.id)
            self.state.fire(spec, None, None, ready)
            if spec.id == self.stop_after:
                return Ending("completed", output=None)
            return None
        interrupted = self._interrupted()
        if interrupted is not None:
            return interrupted
        inputs = [(a[0], a[2], a[3]) for a in arrivals]
        reused = self.reuse.get(spec.id)
        if reused is not None:  # no call, no step, no tokens: the recorded outcome again
            self.emitter.event("node.started", node_id=spec.id, kind=spec.kind, attempt=1)
            self.recorder.start(spec.id, 1, inputs)
            return self._completed(spec, NodeOutput(reused.port, reused.value,
                                                    reason=REUSED), ready)
        exceeded = self.budgets.take_step()
        if exceeded is not None:
            return budget_ending(exceeded)
        self.emitter.event("node.started", node_id=spec.id, kind=spec.kind, attempt=1)
        self.recorder.start(spec.id, 1, inputs)
        if spec.id in self.blocked:
            return self._failed(spec, NodeFailure(
                "side_effects_not_allowed",
                f"{spec.kind} node {spec.id} has side effects; this run does not allow them",
            ), ready)
        # A node without inbound edges (the input, a lone storage or prompt) sees "".
        value: Any = ""
        vtype: PortType = "text"
        if arrivals:  # several values (not a join): the first by source id wins
            value, vtype = arrivals[0][2], arrivals[0][3]
        if spec.inline is not None:
            ctx = NodeContext(self.ctx, spec.id, spec.kind, spec.config, self.budgets.clock,
                              inputs)
            try:
                out = spec.inline(ctx, value, vtype)
            except NodeFailure as failure:
                return self._failed(spec, failure, ready)
            except Exception as exc:  # a bug or a value of an unexpected shape
                log.exception("node %s failed", spec.id)
                return self._failed(spec, NodeFailure("node_error", _describe(exc)), ready)
            return self._completed(spec, out, ready)
        task = asyncio.get_running_loop().create_task(
            self._attempts(spec, value, vtype, inputs), name=f"node:{spec.id}"
        )
        task.add_done_callback(functools.partial(self._crashed, spec))
        self.tasks[spec.id] = task
        return None

    def _interrupted(self) -> Ending | None:
        """Cancelled, events lost, or past the deadline: the run ends before the next node."""
        cancel = self.ctx.cancel
        if cancel is not None and cancel.is_set():
            return Ending("cancelled")
        lost = self.emitter.failed()
        if lost is not None:
            return events_lost_ending(lost)
        if self.budgets.expired():
            return timeout_ending(self.budgets.timeout_seconds)
        return None

    def _crashed(self, spec: NodeSpec, task: asyncio.Task[None]) -> None:
        """A task that died outside its own error handling still reports, so the loop
        never waits for a result that will not come."""
        exc = None if task.cancelled() else task.exception()
        if exc is not None:
            log.error("node %s crashed", spec.id, exc_info=exc)
            self.done.put_nowait((spec, None, NodeFailure("node_error", _describe(exc))))

    async def _attempts(self, spec: NodeSpec, value: Any, vtype: PortType,
                        inputs: list[Any]) -> None:
        """Run an async component under its timeout; retry what the registry allows."""
        request = self.ctx.request
        timeout = request.node_timeouts.get(spec.kind, float(spec.comp.timeout_seconds))
        component = spec.task
        assert component is not None  # only nodes without an inline implementation get here
        attempt = 1
        while True:
            stream = StreamRedactor(self.redactor) if spec.comp.streams else None
            clock = Clock(timeout, parent=self.budgets.clock)
            ctx = NodeContext(self.ctx, spec.id, spec.kind, spec.config, clock, inputs, attempt,
                              stream)
            try:
                async with clock.limit():
                    out = await component(ctx, value, vtype)
                self.done.put_nowait((spec, out, None))
                return
            except NodeFailure as exc:
                failure = exc
            except TimeoutError:
                failure = NodeFailure("timeout", f"{spec.kind} node {spec.id} took longer than "
                                                 f"{timeout:g} s")
            except Exception as exc:
                log.exception("node %s failed", spec.id)
                failure = NodeFailure("node_error", _describe(exc))
            if failure.code not in RETRYABLE or attempt > spec.comp.retries:
                self.done.put_nowait((spec, None, failure))
                return
            self.recorder.finish(spec.id, spec.kind, attempt, status="failed",
                                 error=self._error(failure))
            attempt += 1
            self.attempts[spec.id] = attempt
            self.emitter.event("node.retrying", node_id=spec.id, attempt=attempt,
                               error=self._error(failure))
            self.recorder.start(spec.id, attempt, inputs)
            self.emitter.reset_deltas(spec.id)
            await asyncio.sleep(request.retry_delay_seconds)

    def _completed(self, spec: NodeSpec, out: NodeOutput, ready: list[str]) -> Ending | None:
        state = self.state
        fields: dict[str, Any] = {"node_id": spec.id}
        port_type: PortType | None = "text"
        if spec.is_output:
            state.output, state.output_seen = out.value, True
            text = out.value
        else:
            fields["port"] = out.port
            port_type = spec.port_types.get(out.port)
            if port_type is None:
                return self._failed(spec, NodeFailure(
                    "node_error", f"{spec.kind} fired unknown port {out.port!r}"), ready)
            text = to_text(out.value, port_type)
        fields["preview"] = self.redactor.preview(text)
        if out.text is not None:
            fields["text"] = self.redactor.text(out.text)
        if out.iterations is not None:
            fields["iterations"] = out.iterations
        if out.reason is not None:
            fields["reason"] = out.reason
        if out.tokens or out.reason == REUSED:
            fields["usage"] = {"tokens": out.tokens}
        self.emitter.event("node.completed", **fields)
        reused = self.reuse.get(spec.id) if out.reason == REUSED else None
        self.recorder.finish(spec.id, spec.kind, self.attempts.get(spec.id, 1),
                             status="reused" if reused else "completed", port=out.port,
                             value=out.value, vtype=port_type or "text", tokens=out.tokens,
                             cost=out.cost, reused_from=reused.from_run if reused else None)
        if out.tokens:
            exceeded = self.budgets.add_tokens(out.tokens)
            if exceeded is not None:
                return budget_ending(exceeded)
        if spec.id == self.stop_after:
            return Ending("completed", output=text)
        if spec.outbound:
            state.fire(spec, out.port, out.value, ready)
        return None

    def _failed(self, spec: NodeSpec, failure: NodeFailure, ready: list[str]) -> Ending | None:
        error = self._error(failure)
        if failure.code in ERROR_PORT_CODES and spec.error_wired:
            # The redacted message goes down the error branch and the run continues.
            self.emitter.event("node.failed", node_id=spec.id, error=error, port="error")
            self.recorder.finish(spec.id, spec.kind, self.attempts.get(spec.id, 1),
                                 status="failed", port="error", value=error["message"],
                                 error=error)
            if spec.id == self.stop_after:
                return Ending("completed", output=error["message"])
            self.state.fire(spec, "error", error["message"], ready)
            return None
        self.emitter.event("node.failed", node_id=spec.id, error=error)
        self.recorder.finish(spec.id, spec.kind, self.attempts.get(spec.id, 1), status="failed",
                             error=error)
        return Ending("failed", error=error, node_id=spec.id, reason="node_failed")

    def _error(self, failure: NodeFailure) -> dict[str, str]:
        return {"code": failure.code, "message": self.redactor.preview(failure.message)}

    async def _cancel_tasks(self) -> None:
        tasks = list(self.tasks.values())
        self.tasks.clear()
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


def _receives_nothing(spec: NodeSpec, arrivals: list[Arrival]) -> bool:
    """Whether the node is skipped: no inbound edge carried a value (for join `all`, one
    did not), or it has no inbound edge at all and never runs on nothing (approval)."""
    if not spec.inbound:
        return spec.needs_value
    return not arrivals or (spec.needs_all_inputs and len(arrivals) < len(spec.inbound))


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
