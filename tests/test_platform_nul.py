"""Bodies with NUL characters (which PostgreSQL cannot store) get a 400, not a 500."""

from typing import Any

from designs.models import Design
from tests.conftest import Api
from tests.designs_helpers import assistant_graph, make_design


def test_it_refuses_nul_anywhere_in_a_body(api: Api, alice: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    graph = assistant_graph()
    graph["edges"][0]["from_port"] = "out\x00"
    client = api.client_for(alice)
    saved = client.put(f"/api/v1/agent-designs/{design.pk}", {"revision": 1, "graph": graph},
                       format="json")
    api.assert_error(saved, 400, "invalid_json")
    created = client.post("/api/v1/agent-designs",
                          {"project_id": acme.pk, "name": "a\x00b"}, format="json")
    api.assert_error(created, 400, "invalid_json")
    keyed = client.post("/api/v1/agent-designs/validate",
                        {"nodes": [], "edges": [], "\x00": 1}, format="json")
    # The validate routes answer any refused body in the issue shape.
    error = api.assert_error(keyed, 400, "invalid_document")
    assert [i["code"] for i in error["details"]["issues"]] == ["invalid_document"]
    assert Design.objects.get(pk=design.pk).revision == 1
