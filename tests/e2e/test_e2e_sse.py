"""SSE: live deltas, and resuming with Last-Event-ID misses nothing and repeats nothing."""

from typing import Any

import httpx
import pytest

from approvals.actions import do_decide
from approvals.models import ApprovalRequest
from designs.starter_templates import TEMPLATES
from tests.conftest import Api
from tests.e2e.conftest import Http
from tests.e2e.helpers import approval_graph, wait_for, wait_stored
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_resumes_from_last_event_id(stack: Stack, api: Api, alice: Any, acme: Any) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, TEMPLATES[2]["graph"])
    run_id = http.start(design_id, input="hello, a bug").json()["id"]
    first = [d for k, d in http.sse(design_id, run_id, stop_after=3) if k != "delta"]
    rest = [d for k, d in http.sse(design_id, run_id, last_event_id=first[-1]["seq"])
            if k != "delta"]
    seqs = [e["seq"] for e in first + rest]
    assert seqs == list(range(len(seqs))) and rest[-1]["type"] == "run.completed"
    run = wait_stored(http, design_id, run_id)
    assert run["events"] == first + rest
    # After the terminal event there is nothing more: the stream closes at once.
    assert http.sse(design_id, run_id, last_event_id=seqs[-1]) == []


def test_it_streams_deltas_live(stack: Stack, api: Api, alice: Any, carol: Any,
                                acme: Any) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, approval_graph())
    run_id = http.start(design_id, input="one two three four").json()["id"]

    def approve(kind: str, data: dict[str, Any]) -> None:
        if kind == "approval.requested":
            approval = ApprovalRequest.objects.get(pk=data["approval_id"])
            do_decide(carol, approval, "approve", "fine")

    frames = http.sse(design_id, run_id, on_event=approve)
    kinds = [k for k, _ in frames]
    deltas = [d for k, d in frames if k == "delta"]
    assert kinds[-1] == "run.completed" and deltas, kinds
    assert "".join(d["delta"] for d in deltas).strip() == "mock: one two three four"
    done = next(d for k, d in frames if k == "node.completed" and d["node_id"] == "model")
    assert done["text"] == "mock: one two three four"
    run = wait_for(lambda: (r := http.run(design_id, run_id))["status"] == "completed" and r)
    assert all(e["type"] != "node.delta" for e in run["events"])


def _long_chain(length: int) -> dict[str, Any]:
    ids = [f"p{i:02d}" for i in range(length)]
    nodes: list[dict[str, Any]] = [{"id": "input", "kind": "input"},
                                   {"id": "output", "kind": "output"}]
    nodes += [{"id": n, "kind": "prompt", "config": {"template": "{input}."}} for n in ids]
    chain = ["input", *ids, "output"]
    edges = [{"from": a, "to": b} for a, b in zip(chain, chain[1:], strict=False)]
    return {"schema_version": 2, "nodes": nodes, "edges": edges, "settings": {"max_steps": 200}}


def test_it_delivers_a_burst_once_and_in_order_across_reconnects(stack: Stack, api: Api,
                                                                 alice: Any, acme: Any) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, _long_chain(98))
    run_ids = [http.start(design_id, input=f"burst {i}").json()["id"] for i in range(3)]
    for run_id in run_ids:
        received: list[dict[str, Any]] = []
        while not received or received[-1]["type"] != "run.completed":
            last = received[-1]["seq"] if received else None
            frames = http.sse(design_id, run_id, last_event_id=last, stop_after=37)
            received += [d for k, d in frames if k != "delta"]
        assert [e["seq"] for e in received] == list(range(len(received)))
        assert len(received) > 200  # run.started, 100 × (started, completed), the end
        assert wait_stored(http, design_id, run_id)["events"] == received


def test_it_guards_the_stream(stack: Stack, api: Api, alice: Any, mallory: Any,
                              acme: Any) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, TEMPLATES[0]["graph"])
    run_id = http.start(design_id, input="x").json()["id"]
    url = f"/api/v1/agent-designs/{design_id}/runs/{run_id}/events"
    sse = {"Accept": "text/event-stream"}
    other = Http(stack, api.token_for(mallory)).client.get(url, headers=sse)
    assert other.status_code == 404 and other.json()["error"]["code"] == "not_found"
    anonymous = httpx.get(f"{stack.base_url}{url}", headers=sse)
    assert anonymous.status_code == 401
    bad = httpx.get(f"{stack.base_url}{url}", headers={**sse, "Authorization": "Bearer nope"})
    assert bad.status_code == 401 and bad.json()["error"]["code"] == "invalid_token"
