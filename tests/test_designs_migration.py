"""Version 1 drafts are migrated on read, never rewritten; the next save stores version 2."""

from typing import Any

from designs.models import Design, DesignRevision
from tests.conftest import Api

V1_DRAFT: dict[str, Any] = {
    "name": "Old agent",
    "nodes": [
        {"id": "input", "kind": "input"},
        {"id": "mem", "kind": "memory", "config": {"strategy": "remember the last few"}},
        {"id": "llm", "kind": "model", "config": {"model": ""}},
        {"id": "output", "kind": "output"},
    ],
    "edges": [{"from": "input", "to": "mem"}, {"from": "mem", "to": "llm"},
              {"from": "llm", "to": "output"}],
}


def _legacy_design(alice: Any, acme: Any) -> Design:
    design = Design.objects.create(project=acme, name="Old agent", created_by=alice)
    DesignRevision.objects.create(design=design, number=1, graph=V1_DRAFT, author=alice)
    return design


def test_it_migrates_a_v1_draft_on_read(api: Api, alice: Any, acme: Any) -> None:
    design = _legacy_design(alice, acme)
    data = api.client_for(alice).get(f"/api/v1/agent-designs/{design.pk}").json()
    graph = data["graph"]
    assert graph["schema_version"] == 2
    assert graph["settings"] == {"max_steps": 50, "timeout_seconds": 60, "max_tokens": 50000}
    assert graph["edges"][0] == {"from": "input", "to": "mem", "from_port": "out",
                                 "to_port": "in"}
    assert graph["nodes"][2]["config"]["model"] == "llm"
    assert graph["nodes"][1]["config"]["strategy"] == "window"
    codes = {i["code"] for i in data["validation"]["issues"]}
    assert {"migrated_from_v1", "memory_strategy_coerced"} <= codes
    assert data["validation"]["runnable"] is True
    assert DesignRevision.objects.get(design=design).graph == V1_DRAFT


def test_it_stores_version_2_on_the_next_save(api: Api, alice: Any, acme: Any) -> None:
    design = _legacy_design(alice, acme)
    client = api.client_for(alice)
    read = client.get(f"/api/v1/agent-designs/{design.pk}").json()
    saved = client.put(f"/api/v1/agent-designs/{design.pk}",
                       {"revision": read["revision"], "graph": V1_DRAFT}, format="json")
    assert saved.status_code == 200
    stored = DesignRevision.objects.get(design=design, number=2).graph
    assert stored["schema_version"] == 2 and stored["edges"][0]["from_port"] == "out"
    assert DesignRevision.objects.get(design=design, number=1).graph == V1_DRAFT
