"""OpenTelemetry traces of runs: exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT
is set, and not at all otherwise (no provider, no exporter, no thread: one look at the
environment; the SDK is not even imported).

The trace of a run (docs/operations.md, Traces):
- the gateway's span of the request that starts it (`kionga.run.start`, runs/start.py),
  child of the caller's W3C `traceparent` when the request carries one;
- its `traceparent` travels in the signed task (runner/task_payload.py, field
  `traceparent`), so the runner's `kionga.run` span is that span's child;
- one `kionga.node` span per node attempt, child of the run's span, made from the
  node's record (runner/records.py): its times, kind, model, status, tokens and cost;
- resource calls carry the run span's `traceparent` header to the internal listener,
  whose span of the call (kionga/internal_asgi.py) is the run span's child.

An agent turn (agents/runtime.py) is traced the same way: a `kionga.turn` span, child
of the caller's `traceparent`, with its nodes' spans.

Attributes hold identifiers, kinds, model names, statuses, error codes and numbers
only: never an input, an output, an error message, a credential or a header value.
The exporter reads the SDK's standard variables (OTEL_EXPORTER_OTLP_ENDPOINT,
OTEL_EXPORTER_OTLP_HEADERS, OTEL_BSP_SCHEDULE_DELAY, OTEL_SERVICE_NAME, ...).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import Span, Tracer

ENDPOINT_VARIABLE: Final = "OTEL_EXPORTER_OTLP_ENDPOINT"
TRACEPARENT: Final = "traceparent"
# W3C trace context, version 00: what a traceparent may look like (anything else is dropped).
TRACEPARENT_SHAPE: Final = re.compile(r"^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$")
SCOPE: Final = "kionga"

_lock = threading.Lock()
_tracers: dict[str, Tracer] = {}
_providers: list[Any] = []
_broken: set[str] = set()
log = logging.getLogger(__name__)


def enabled() -> bool:
    return bool(os.environ.get(ENDPOINT_VARIABLE, "").strip())


def tracer(service: str) -> Tracer | None:
    """The process's tracer (None: tracing is off). One provider per process and service,
    exporting in batches from a thread of its own (the SDK restarts it after a fork)."""
    if not enabled():
        return None
    with _lock:
        if service in _broken:
            return None
        if service not in _tracers:
            try:
                _tracers[service] = _new_tracer(service)
            except Exception:  # noqa: BLE001 - traces are a view of runs, never their cause
                log.exception("tracing is off in this process: the exporter did not start")
                _broken.add(service)
                return None
        return _tracers[service]


def _new_tracer(service: str) -> Tracer:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    name = os.environ.get("OTEL_SERVICE_NAME", "").strip() or service
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    _providers.append(provider)
    return provider.get_tracer(SCOPE)


def flush(seconds: float = 5.0) -> None:
    """Export the spans still batched (a process about to exit, which may skip atexit)."""
    for provider in list(_providers):
        provider.force_flush(int(seconds * 1000))


def valid_traceparent(value: Any) -> str | None:
    return value if isinstance(value, str) and TRACEPARENT_SHAPE.match(value) else None


def context_of(traceparent: str | None) -> Context | None:
    """The remote parent a traceparent names (None: a new trace)."""
    if valid_traceparent(traceparent) is None:
        return None
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    return TraceContextTextMapPropagator().extract({TRACEPARENT: traceparent or ""})


def traceparent_of(span: Span) -> str | None:
    from opentelemetry.trace import set_span_in_context
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier, context=set_span_in_context(span))
    return carrier.get(TRACEPARENT)


def current_traceparent() -> str | None:
    """The traceparent of the span open in this context (None: none, or tracing off)."""
    if not enabled():
        return None
    from opentelemetry.trace import get_current_span

    span = get_current_span()
    return traceparent_of(span) if span.get_span_context().is_valid else None


@contextmanager
def request_span(service: str, name: str, traceparent: str | None,
                 attributes: Mapping[str, str | int | float | bool]) -> Iterator[None]:
    """A server span around a request (child of the caller's traceparent), current while
    the block runs so current_traceparent() names it. Nothing at all when tracing is off."""
    found = tracer(service)
    if found is None:
        yield
        return
    from opentelemetry.trace import SpanKind

    with found.start_as_current_span(name, context=context_of(traceparent),
                                     kind=SpanKind.SERVER, attributes=dict(attributes)):
        yield


def _nanos(iso: Any) -> int | None:
    try:
        return int(datetime.fromisoformat(str(iso)).timestamp() * 1_000_000_000)
    except ValueError:
        return None


class RunTrace:
    """A run's span and its nodes' spans (runner side)."""

    def __init__(self, found: Tracer, run_id: str, traceparent: str | None,
                 graph: dict[str, Any], name: str = "kionga.run",
                 id_attribute: str = "kionga.run.id") -> None:
        from opentelemetry.trace import SpanKind

        self._tracer = found
        self._models = {node.get("id"): (node.get("config") or {}).get("model")
                        for node in graph.get("nodes") or [] if isinstance(node, dict)}
        self.span = found.start_span(name, context=context_of(traceparent),
                                     kind=SpanKind.CONSUMER, attributes={id_attribute: run_id})
        self.traceparent = traceparent_of(self.span)

    def node(self, record: dict[str, Any]) -> None:
        """One node attempt's span, from its record (runner.records)."""
        from opentelemetry.trace import Status, StatusCode, set_span_in_context

        usage = record.get("usage") or {}
        attributes: dict[str, str | int | float] = {
            "kionga.node.id": str(record.get("node_id")),
            "kionga.node.kind": str(record.get("kind")),
            "kionga.node.attempt": int(record.get("attempt") or 0),
            "kionga.node.status": str(record.get("status")),
            "kionga.usage.tokens": int(usage.get("tokens") or 0),
            "kionga.usage.cost": float(usage.get("cost") or 0.0),
        }
        model = self._models.get(record.get("node_id"))
        if isinstance(model, str) and model:
            attributes["kionga.node.model"] = model
        error = record.get("error") or {}
        if error.get("code"):
            attributes["kionga.error.code"] = str(error["code"])
        span = self._tracer.start_span("kionga.node", context=set_span_in_context(self.span),
                                       attributes=attributes,
                                       start_time=_nanos(record.get("started_at")))
        if record.get("status") == "failed":
            span.set_status(Status(StatusCode.ERROR))
        span.end(end_time=_nanos(record.get("ended_at")))

    def end(self, status: str, reason: str | None = None, tokens: int = 0,
            cost: float = 0.0) -> None:
        from opentelemetry.trace import Status, StatusCode

        self.span.set_attributes({"kionga.run.status": status, "kionga.usage.tokens": tokens,
                                  "kionga.usage.cost": cost})
        if reason:
            self.span.set_attribute("kionga.run.reason", reason)
        if status != "completed":
            self.span.set_status(Status(StatusCode.ERROR))
        self.span.end()


def run_trace(service: str, run_id: str, traceparent: str | None, graph: dict[str, Any],
              name: str = "kionga.run", id_attribute: str = "kionga.run.id"
              ) -> RunTrace | None:
    """A run's (or an agent turn's: `kionga.turn`, `kionga.turn.id`) span, or None."""
    found = tracer(service)
    return None if found is None else RunTrace(found, run_id, traceparent, graph, name,
                                               id_attribute)
