"""Hard ceilings well above the document limits: a graph past 1,000 nodes or 3,000
edges, or a body past 1 MB, is refused before any validation work (413)."""

from __future__ import annotations

from typing import Any

from contracts.registry import CEILINGS, LIMITS
from designs.models import Design
from tests.designs_helpers import assistant_graph, make_design

VALIDATE = "/api/v1/agent-designs/validate"


def test_it_refuses_graphs_past_the_ceilings_on_every_graph_route(
    api: Any, alice: Any, acme: Any
) -> None:
    design = make_design(alice, acme)
    client = api.client_for(alice)
    node = {"id": "n", "kind": "output"}
    too_many_nodes = {"nodes": [node] * (CEILINGS["max_draft_nodes"] + 1), "edges": []}
    edge: dict[str, Any] = {}
    too_many_edges = {"nodes": [], "edges": [edge] * (CEILINGS["max_draft_edges"] + 1)}
    for graph in (too_many_nodes, too_many_edges):
        for response in (
            client.post(VALIDATE, graph, format="json"),
            client.post(f"/api/v1/agent-designs/{design.pk}/validate", graph, format="json"),
            client.post("/api/v1/agent-designs", {"project_id": acme.pk, "name": "big",
                                                  "graph": graph}, format="json"),
            client.put(f"/api/v1/agent-designs/{design.pk}", {"revision": 1, "graph": graph},
                       format="json"),
        ):
            error = api.assert_error(response, 413, "payload_too_large")
            assert "at most" in error["message"]
    assert Design.objects.get(pk=design.pk).revision == 1


def test_it_still_saves_drafts_past_the_document_limits(api: Any, alice: Any, acme: Any) -> None:
    graph = assistant_graph()
    graph["nodes"] += [{"id": f"extra{i}", "kind": "output"} for i in range(LIMITS["max_nodes"])]
    response = api.client_for(alice).post(
        "/api/v1/agent-designs", {"project_id": acme.pk, "name": "draft", "graph": graph},
        format="json")
    assert response.status_code == 201, response.content
    assert not response.json()["validation"]["runnable"]


def test_it_refuses_a_body_past_the_limit_in_the_parser(api: Any, alice: Any) -> None:
    body = '{"nodes": [], "edges": [], "name": "' + "x" * CEILINGS["max_body_bytes"] + '"}'
    response = api.client_for(alice).generic("POST", VALIDATE, body,
                                             content_type="application/json")
    api.assert_error(response, 413, "payload_too_large")
