"""Traces: a run exports OpenTelemetry spans to OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT
is set (runner/tracing.py), and nothing otherwise.

On a private stack whose processes export to a loopback OTLP receiver
(tests/otlp_receiver.py): one run, started with and without an Idempotency-Key, gives
the gateway's `kionga.run.start` span (child of the caller's traceparent), the runner's
`kionga.run` span (its child, through the signed task) and one `kionga.node` span per
node (the run span's children) with kind, model, tokens, cost and status; no attribute
holds the run's input, the runner token or any credential."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection

from kionga.resource_models import KnowledgeBase
from runs.models import RunCredential
from tests.conftest import Api
from tests.designs_helpers import assistant_graph
from tests.e2e.conftest import Http
from tests.e2e.helpers import wait_stored
from tests.otlp_receiver import OtlpReceiver, ReceivedSpan
from tests.stack import ROOT, RUNNER_TOKEN, Stack

pytestmark = pytest.mark.django_db(transaction=True)

CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
CANARY = "canary-7f3a9c-secret-input"


@pytest.fixture(scope="module")
def receiver() -> Iterator[OtlpReceiver]:
    running = OtlpReceiver().start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def stack(receiver: OtlpReceiver, django_db_setup: Any, django_db_blocker: Any,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    url = f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    running = Stack(database_url=url, only=("gateway", "internal", "events", "runner"),
                    extra_env={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
                               "OTEL_BSP_SCHEDULE_DELAY": "100"},
                    log_dir=tmp_path_factory.mktemp("traces-logs")).start()
    yield running
    running.stop()


def spans_of(receiver: OtlpReceiver, trace_id: str, names: set[str],
             timeout: float = 30.0) -> list[ReceivedSpan]:
    deadline = time.monotonic() + timeout
    while True:
        found = [s for s in receiver.received() if s.trace_id == trace_id]
        if names <= {s.name for s in found} and _run_span_ended(found):
            return found
        assert time.monotonic() < deadline, found
        time.sleep(0.1)


def _run_span_ended(found: list[ReceivedSpan]) -> bool:
    return any(s.name == "kionga.run" for s in found)  # exported only once ended


@pytest.mark.parametrize("route_headers", [{}, {"Idempotency-Key": "traced-start"}],
                         ids=["plain", "idempotent"])
def test_a_run_exports_linked_spans_without_secrets(
        stack: Stack, receiver: OtlpReceiver, api: Api, alice: Any, acme: Any,
        route_headers: dict[str, str]) -> None:
    http = Http(stack, api.token_for(alice))
    graph = assistant_graph()
    design_id = http.create_design(acme.pk, graph)
    headers = {"traceparent": f"00-{CALLER_TRACE[:-4]}{len(route_headers):04x}-"
                              f"{CALLER_SPAN}-01", **route_headers}
    trace_id = headers["traceparent"].split("-")[1]
    response = http.client.post(f"/api/v1/agent-designs/{design_id}/runs",
                                json={"input": f"hello {CANARY}"}, headers=headers)
    assert response.status_code == 201, response.text
    run_id = response.json()["id"]
    run = wait_stored(http, design_id, run_id)
    assert run["status"] == "completed", run

    spans = spans_of(receiver, trace_id, {"kionga.run.start", "kionga.run", "kionga.node"})
    by_name: dict[str, list[ReceivedSpan]] = {}
    for span in spans:
        by_name.setdefault(span.name, []).append(span)
    [start] = by_name["kionga.run.start"]
    [run_span] = by_name["kionga.run"]
    assert (start.service, start.parent_span_id) == ("kionga-gateway", CALLER_SPAN)
    assert start.attributes["kionga.run.id"] == run_id
    assert start.attributes["kionga.project.id"] == acme.pk
    assert (run_span.service, run_span.parent_span_id) == ("kionga-runner", start.span_id)
    assert run_span.attributes["kionga.run.id"] == run_id
    assert run_span.attributes["kionga.run.status"] == "completed"
    assert run_span.attributes["kionga.usage.tokens"] == run["usage"]["tokens"]

    nodes = {s.attributes["kionga.node.id"]: s for s in by_name["kionga.node"]}
    graph_nodes = {n["id"]: n for n in graph["nodes"]}
    assert set(nodes) == set(graph_nodes)
    for node_id, span in nodes.items():
        assert span.parent_span_id == run_span.span_id
        assert span.attributes["kionga.node.kind"] == graph_nodes[node_id]["kind"]
        assert span.attributes["kionga.node.status"] == "completed"
        assert {"kionga.usage.tokens", "kionga.usage.cost"} <= set(span.attributes)
        model = (graph_nodes[node_id].get("config") or {}).get("model")
        assert span.attributes.get("kionga.node.model") == (model or None)
    assert any(s.attributes["kionga.usage.tokens"] > 0 for s in nodes.values())

    credential = RunCredential.objects.get(run_id=run_id)
    hidden = [CANARY, RUNNER_TOKEN, credential.token_hash]
    for span in spans:
        text = json.dumps(span.attributes, default=str)
        assert not any(secret in text for secret in hidden), span


def test_resource_calls_carry_the_run_span(stack: Stack, receiver: OtlpReceiver, api: Api,
                                           alice: Any, acme: Any) -> None:
    """A knowledge search calls the internal listener with the run span's traceparent:
    the listener's `kionga.resource.call` span is the run span's child, and names the
    route's pattern, not its path."""
    KnowledgeBase.objects.create(project=acme, key="handbook")
    http = Http(stack, api.token_for(alice))
    graph = {"schema_version": 2, "name": "Search",
             "nodes": [{"id": "input", "kind": "input"},
                       {"id": "search", "kind": "knowledge",
                        "config": {"knowledge_base": "handbook"}},
                       {"id": "output", "kind": "output"}],
             "edges": [{"from": "input", "to": "search"}, {"from": "search", "to": "output"}]}
    design_id = http.create_design(acme.pk, graph)
    trace_id = "5" * 32
    response = http.client.post(f"/api/v1/agent-designs/{design_id}/runs",
                                json={"input": f"find {CANARY}"},
                                headers={"traceparent": f"00-{trace_id}-{CALLER_SPAN}-01"})
    assert response.status_code == 201, response.text
    run_id = response.json()["id"]
    assert wait_stored(http, design_id, run_id)["status"] == "completed"

    spans = spans_of(receiver, trace_id, {"kionga.run", "kionga.resource.call"})
    [run_span] = [s for s in spans if s.name == "kionga.run"]
    calls = [s for s in spans if s.name == "kionga.resource.call"]
    assert calls
    for call in calls:
        assert (call.service, call.parent_span_id) == ("kionga-internal", run_span.span_id)
        assert run_id not in call.attributes["http.route"], call.attributes
        assert CANARY not in json.dumps(call.attributes)


def test_tracing_off_loads_no_sdk_and_sends_no_traceparent() -> None:
    """Without OTEL_EXPORTER_OTLP_ENDPOINT: no span, no traceparent in the task, and the
    SDK and exporter are never imported."""
    script = (
        "import sys, runner.tracing as t\n"
        "with t.request_span('s', 'n', '00-' + '1' * 32 + '-' + '2' * 16 + '-01', {}):\n"
        "    assert t.current_traceparent() is None\n"
        "assert t.tracer('s') is None and t.run_trace('s', 'r', None, {}) is None\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_an_exporter_that_cannot_start_turns_tracing_off() -> None:
    """A setting the SDK refuses (here a batch size of 0) logs once and leaves the process
    untraced: no run start and no run fails for its traces."""
    script = (
        "import runner.tracing as t\n"
        "with t.request_span('s', 'n', None, {}):\n"
        "    pass\n"
        "assert t.tracer('s') is None and t.run_trace('s', 'r', None, {}) is None\n"
        "print('untraced')\n"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT),
           "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9",
           "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "0"}
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "untraced", done.stdout + done.stderr
    assert done.stderr.count("tracing is off in this process") == 1, done.stderr
