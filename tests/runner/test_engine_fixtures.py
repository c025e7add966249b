"""Every runnable shared fixture (contracts/fixtures/graphs/*.json) runs with the mock
backend and in-memory resources, and ends with exactly one terminal event."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from engine_kit import run_async

from contracts.validate import validate_graph
from runner.inmemory_resources import InMemoryResources


def load() -> list[tuple[str, Any]]:
    try:
        from contracts.fixtures import load_graph_fixtures  # type: ignore[import-not-found]
    except ImportError:
        return []
    found = load_graph_fixtures()
    items = found.items() if isinstance(found, dict) else enumerate(found)
    return [(str(name), fixture) for name, fixture in items]


def document_of(fixture: Any) -> Any:
    """The graph document of a fixture, whatever shape the loader gives it."""
    for key in ("document", "graph", "doc", "body"):
        value = fixture.get(key) if isinstance(fixture, dict) else getattr(fixture, key, None)
        if isinstance(value, dict) and "nodes" in value:
            return value
    return fixture


def name_of(name: str, fixture: Any) -> str:
    label = fixture.get("name") if isinstance(fixture, dict) else getattr(fixture, "name", None)
    return str(label or name)


FIXTURES = load()


@pytest.mark.skipif(not FIXTURES, reason="contracts/fixtures is not there yet")
@pytest.mark.parametrize(("name", "fixture"), FIXTURES,
                         ids=[name_of(n, f) for n, f in FIXTURES] or None)
def test_it_runs_every_runnable_fixture_to_one_terminal_event(name: str, fixture: Any) -> None:
    report = validate_graph(document_of(fixture))
    if not report.runnable or report.graph is None:
        pytest.skip("not runnable (the validator says why)")
    done = asyncio.run(asyncio.wait_for(run_async(
        report.graph, "I want a refund for order 42",
        resources=InMemoryResources(auto_decision=("approve", "ok")),
    ), timeout=30))
    # run_async checked the invariants: schema, seq, exactly one terminal event, last.
    assert done.terminal["type"] in {"run.completed", "run.failed"}
