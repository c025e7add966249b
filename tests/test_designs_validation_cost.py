"""Validation cost: resource IDs are looked up with one query per kind (a prepared
statement, designs.resource_check), and a design read does not re-validate its
unchanged revision (only its resource IDs)."""

from __future__ import annotations

from typing import Any

from contracts.fixtures import load_graph_fixtures
from contracts.validate import StaticResources, validate_graph
from designs import validation
from designs.actions import do_create_design
from designs.models import DesignRevision
from kionga.resource_models import KnowledgeBase


def knowledge_chain(keys: list[str]) -> dict[str, Any]:
    nodes: list[dict[str, Any]] = [{"id": "input", "kind": "input"}]
    nodes += [{"id": f"kb{i}", "kind": "knowledge", "config": {"knowledge_base": key}}
              for i, key in enumerate(keys)]
    nodes.append({"id": "output", "kind": "output"})
    edges = [{"from": a["id"], "to": b["id"]} for a, b in zip(nodes, nodes[1:], strict=False)]
    return {"schema_version": 2, "nodes": nodes, "edges": edges}


def test_it_looks_up_each_resource_kind_once(api: Any, alice: Any, acme: Any,
                                            prepared_reads: list[tuple[str, Any]]) -> None:
    keys = [f"kb-{i}" for i in range(40)]
    for key in keys[::2]:
        KnowledgeBase.objects.create(project=acme, key=key)
    client = api.client_for(alice)
    response = client.post("/api/v1/agent-designs/validate",
                           {"project_id": acme.pk, **knowledge_chain(keys)}, format="json")
    kb = [p for _, p in prepared_reads
          if isinstance(p, dict) and "knowledge_base" in str(p.get("refs"))]
    assert len(kb) == 1
    missing = [i["path"] for i in response.json()["issues"] if i["code"] == "unknown_resource"]
    assert missing == [f"nodes.{i + 1}.config.knowledge_base" for i in range(1, 40, 2)]


def test_it_does_not_revalidate_an_unchanged_revision(
    api: Any, alice: Any, acme: Any, monkeypatch: Any
) -> None:
    kb = KnowledgeBase.objects.create(project=acme, key="handbook")
    design = do_create_design(alice, acme, "kb", "", knowledge_chain(["handbook"]))
    client = api.client_for(alice)
    first = client.get(f"/api/v1/agent-designs/{design.pk}").json()
    assert first["validation"]["runnable"], first["validation"]
    calls: list[Any] = []
    real = validation.validate_graph

    def counting(*args: Any) -> Any:
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(validation, "validate_graph", counting)
    again = client.get(f"/api/v1/agent-designs/{design.pk}").json()
    assert again == first and calls == []
    # A deleted resource shows at once: resource IDs are re-checked on every read.
    kb.delete()
    gone = client.get(f"/api/v1/agent-designs/{design.pk}").json()["validation"]
    assert not gone["runnable"] and calls == []
    assert [i["code"] for i in gone["issues"]] == ["unknown_resource"]
    # A new validator (other fingerprint) recomputes once.
    DesignRevision.objects.filter(design=design).update(validation={"fingerprint": "old"})
    assert client.get(f"/api/v1/agent-designs/{design.pk}").json()["validation"] == gone
    assert len(calls) == 1


def test_the_cached_report_equals_a_fresh_one_for_every_fixture(alice: Any, acme: Any) -> None:
    for fixture in load_graph_fixtures():
        design = do_create_design(alice, acme, fixture["name"][:200], "", fixture["graph"])
        revision = design.current()
        resources = StaticResources(fixture.get("resources") or {})
        validation.revision_report(revision, acme)  # fills the cache
        revision.refresh_from_db()
        cached = validation._cached(revision)
        assert cached is not None
        fresh = validate_graph(revision.graph, resources)
        again = validation.with_resources(cached, resources)
        assert again.to_dict() == fresh.to_dict(), fixture["name"]
