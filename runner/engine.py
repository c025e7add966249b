"""Public entry point: run one normalized graph and stream its events.

    result = await run_graph(request, resources=client, emit=sink, cancel=event)

`emit` (a plain function) receives every event dict (run-event.v1) in seq order,
made storable (contracts.text); `record` (optional) one record per node attempt
(runner.records), never an event. Exactly one terminal event (run.completed,
run.failed or run.cancelled) is emitted, last; nothing follows it. If `emit` raises,
events are being lost: the graph is stopped and the run fails (reason events_lost).
The gateway computes cost from `usage.tokens`; the engine does not.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Coroutine
from typing import Any

from contracts.text import PatternError
from runner.artifacts import mismatch_message, mismatched_versions
from runner.backends import ModelBackend, make_backend
from runner.budgets import Budgets
from runner.clock import Clock
from runner.context import RunContext, RunSubflow, SubflowOutcome
from runner.events import EmitFn, Emitter, ForwardingEmitter
from runner.failures import ERROR_PORT_CODES, NodeFailure
from runner.plan import InvalidGraph, Plan, compile_graph
from runner.records import Recorder, RecordFn
from runner.redact import Redactor
from runner.request import RunRequest, RunResult
from runner.resources import ResourceClient
from runner.scheduler import Ending, Scheduler, events_lost_ending, timeout_ending

__all__ = ["RunRequest", "RunResult", "run_graph", "run_graph_sync"]

# Subflows calling subflows: the artifact check forbids cycles; this bounds depth anyway.
MAX_SUBFLOW_DEPTH = 8


async def run_graph(
    request: RunRequest,
    *,
    resources: ResourceClient,
    emit: EmitFn | None,
    cancel: asyncio.Event | None = None,
    backend: ModelBackend | None = None,
    record: RecordFn | None = None,
) -> RunResult:
    lost = asyncio.Event()
    emitter = Emitter(emit, on_failure=lost.set)
    # The client's own secrets (the run credential) are always redacted.
    declared = getattr(resources, "secret_values", None)
    secrets = [*request.secrets, *(declared() if callable(declared) else ())]
    try:
        redactor = Redactor(secrets, request.secret_patterns)
    except PatternError as exc:
        redactor = Redactor(secrets)
        emitter.event("run.started")
        bad = Ending("failed", error={"code": "node_error",
                                      "message": f"a secret pattern is not valid RE2: {exc}"},
                     reason="invalid_request")
        return _finish(emitter, redactor, bad, Budgets({}))
    emitter.event("run.started")
    tampered = (mismatched_versions(request.subflows, request.subflow_hashes)
                if request.subflow_hashes is not None else [])
    if tampered:
        bad = Ending("failed", error={"code": "node_error",
                                      "message": mismatch_message(tampered)},
                     reason="invalid_artifact")
        return _finish(emitter, redactor, bad, Budgets({}))
    try:
        plan = compile_graph(request.graph)
    except InvalidGraph as exc:
        bad = Ending("failed", error={"code": "node_error", "message": str(exc)},
                     node_id=exc.node_id, reason="invalid_graph")
        return _finish(emitter, redactor, bad, Budgets({}))
    budgets = Budgets(plan.settings)
    if request.stop_after and request.stop_after not in plan.nodes:
        bad = Ending("failed", error={"code": "node_error", "message":
                                      f"stop_after names no node: {request.stop_after!r}"},
                     reason="invalid_request")
        return _finish(emitter, redactor, bad, budgets)
    ctx = RunContext(request, resources, backend or make_backend(request.llm), redactor,
                     emitter, _unavailable, request.input, cancel, request.scripted_approvals)
    ctx.run_subflow = _Subflows(request).bind(ctx, depth=1)
    scheduler = Scheduler(plan, ctx, budgets, request.stop_after,
                          recorder=Recorder(record, redactor), reuse=request.reuse)
    main = asyncio.ensure_future(_timed(scheduler, budgets))
    try:
        ending = await _supervise(main, cancel, lost)
    except asyncio.CancelledError:
        # Our own caller cancelled us: still end the run properly, then obey.
        await _stop(main)
        _finish(emitter, redactor, None, budgets)
        raise
    return _finish(emitter, redactor, ending, budgets)


async def _timed(scheduler: Scheduler, budgets: Budgets) -> Ending:
    """The scheduler's ending, or the timeout's once the run's clock runs out (it stands
    still while the run waits for a person: runner.clock)."""
    try:
        async with budgets.clock.limit():
            return await scheduler.run()
    except TimeoutError:
        return timeout_ending(budgets.timeout_seconds)


async def _supervise(main: asyncio.Future[Ending], cancel: asyncio.Event | None,
                     lost: asyncio.Event) -> Ending | None:
    """The scheduler's ending (a timeout's included), None when cancelled, or a
    lost-events ending."""
    waiters = [asyncio.ensure_future(e.wait()) for e in (cancel, lost) if e is not None]
    pending: set[asyncio.Future[Any]] = {main, *waiters}
    try:
        done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
    if main in done:
        try:
            ending = main.result()
            return None if ending.status == "cancelled" else ending
        except Exception as exc:  # an engine bug must still end the run with one event
            return Ending("failed", error={"code": "node_error", "message": f"engine error: {exc}"},
                          reason="engine_error")
    await _stop(main)
    return None  # cancelled or events lost: _finish tells one from the other


async def _stop(main: asyncio.Future[Ending]) -> None:
    main.cancel()
    try:
        await main
    except BaseException:  # noqa: BLE001 - cancelled or failed: either way it is over
        pass


def _finish(emitter: Emitter, redactor: Redactor, ending: Ending | None,
            budgets: Budgets) -> RunResult:
    lost = emitter.failed()
    if lost is not None:  # whatever else happened, this is why the run ended
        ending = events_lost_ending(lost)
    usage = {"tokens": budgets.tokens}
    result = RunResult("cancelled", usage=usage, steps=budgets.steps)
    if ending is None:
        result.error = {"code": "cancelled", "message": "the run was cancelled"}
        result.reason = "cancelled"
        emitter.event("run.cancelled", error=result.error, reason="cancelled", usage=usage)
    elif ending.status == "completed":
        result.status = "completed"
        result.output = None if ending.output is None else redactor.output(ending.output)
        emitter.event("run.completed", output=result.output, usage=usage)
    else:
        raw = ending.error or {"code": "node_error", "message": "the run failed"}
        # Node errors are redacted already; engine errors and the like are not.
        error = {"code": raw["code"], "message": redactor.preview(raw["message"])}
        result.status, result.error, result.reason = "failed", error, ending.reason
        result.node_id = ending.node_id
        fields: dict[str, Any] = {"error": error, "reason": ending.reason, "usage": usage}
        if ending.node_id is not None:
            fields["node_id"] = ending.node_id
        if ending.budget is not None:
            fields["budget"] = ending.budget
        emitter.event("run.failed", **fields)
    result.events = emitter.stored
    return result


async def _unavailable(node_id: str, version: str, text: str, clock: Clock) -> SubflowOutcome:
    raise NodeFailure("node_error", "subflows are not available here")


class _Subflows:
    """Runs published versions for subflow, map and loop nodes (nested, own budgets)."""

    def __init__(self, request: RunRequest) -> None:
        self.request = request
        self._plans: dict[str, Plan] = {}  # compiled once per run, shared by every depth

    def bind(self, parent: RunContext, depth: int) -> RunSubflow:
        """`parent`'s run_subflow. It refers to `parent` weakly: the context holds it, and
        a reference cycle would leave every run's state to a full collection of the
        process's heap (runner/heap.py) instead of freeing it as the run ends."""
        context = weakref.ref(parent)

        async def run(node_id: str, version: str, text: str, clock: Clock) -> SubflowOutcome:
            caller = context()
            assert caller is not None  # called through the context, which holds it
            return await self._run(caller, depth, node_id, version, text, clock)

        return run

    async def _run(self, parent: RunContext, depth: int, node_id: str, version: str,
                   text: str, clock: Clock) -> SubflowOutcome:
        if depth > MAX_SUBFLOW_DEPTH:
            raise NodeFailure("node_error", f"subflows nest deeper than {MAX_SUBFLOW_DEPTH}")
        plan = self._plan(version)
        scripted = parent.scripted_approvals
        ctx = RunContext(parent.request, parent.resources, parent.backend, parent.redactor,
                         ForwardingEmitter(parent.emitter, node_id), _unavailable, text,
                         parent.cancel, scripted.nested(node_id) if scripted else None)
        ctx.run_subflow = self.bind(ctx, depth + 1)
        budgets = Budgets(plan.settings, parent=clock)
        try:
            async with budgets.clock.limit():
                ending = await Scheduler(plan, ctx, budgets).run()
        except TimeoutError:
            raise NodeFailure("timeout", f"subflow {version} took longer than its "
                                         f"timeout_seconds ({budgets.timeout_seconds} s)") from None
        if ending.status != "completed":
            error = ending.error or {"code": "node_error", "message": "failed"}
            code = error["code"] if error["code"] in ERROR_PORT_CODES else "node_error"
            where = f" at {ending.node_id}" if ending.node_id else ""
            raise NodeFailure(code, f"subflow {version} failed{where}: {error['message']}")
        return SubflowOutcome(ending.output or "", budgets.tokens)

    def _plan(self, version: str) -> Plan:
        if version not in self._plans:
            graph = self.request.subflows.get(version)
            if graph is None:
                raise NodeFailure("node_error", f"subflow version {version} was not provided")
            try:
                self._plans[version] = compile_graph(graph)
            except InvalidGraph as exc:
                raise NodeFailure("node_error", f"subflow {version}: {exc}") from None
        return self._plans[version]


def run_graph_sync(
    request: RunRequest,
    *,
    resources: ResourceClient,
    emit: EmitFn | None,
    cancel: threading.Event | None = None,
    backend: ModelBackend | None = None,
    record: RecordFn | None = None,
) -> RunResult:
    """run_graph for synchronous callers (a Celery task): its own event loop.

    `cancel` is a threading.Event another thread may set (e.g. on a revoke).
    """

    async def main() -> RunResult:
        stop = _ThreadedStop(cancel)
        watcher = asyncio.ensure_future(_watch(cancel, stop)) if cancel is not None else None
        try:
            return await run_graph(request, resources=resources, emit=emit, cancel=stop,
                                   backend=backend, record=record)
        finally:
            if watcher is not None:
                watcher.cancel()

    return _run_on_thread_loop(main())


_loops = threading.local()


def _run_on_thread_loop(main: Coroutine[Any, Any, RunResult]) -> RunResult:
    """asyncio.run, on one event loop per thread kept from run to run (a Celery pool
    process runs its runs on one loop, not a new one each time). As asyncio.run does,
    tasks the run left behind are cancelled and awaited before it returns."""
    loop: asyncio.AbstractEventLoop | None = getattr(_loops, "loop", None)
    if loop is None or loop.is_closed():
        loop = _loops.loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(main)
    finally:
        left = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in left:
            task.cancel()
        if left:
            loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))


class _ThreadedStop(asyncio.Event):
    """The run's cancel event, also set (for the checks between nodes) as soon as the
    other thread's flag is: a CPU-bound run need not yield to _watch to notice."""

    def __init__(self, flag: threading.Event | None) -> None:
        super().__init__()
        self._flag = flag

    def is_set(self) -> bool:
        return super().is_set() or (self._flag is not None and self._flag.is_set())


async def _watch(flag: threading.Event, stop: asyncio.Event) -> None:
    while not flag.is_set():
        await asyncio.sleep(0.05)
    stop.set()
