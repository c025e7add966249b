"""The artifact: artifact.v1 as written, hashed as the contracts hash, subflows transitive."""

from typing import Any

import pytest

from contracts.hashing import content_sha256
from contracts.registry import REGISTRY_VERSION
from contracts.schemas import schema_errors
from designs.publish import ArtifactInvalid, build_artifact
from tests.designs_helpers import make_design
from tests.versions_helpers import flow_graph, prompt_graph, publish, published, save


def test_it_writes_an_artifact_that_follows_the_schema(alice: Any, acme: Any) -> None:
    version = publish(alice, make_design(alice, acme), notes="Ship it")
    artifact = version.artifact
    assert schema_errors("artifact.v1", artifact) == []
    assert artifact["content_sha256"] == content_sha256(artifact["graph"]) \
        == version.content_sha256
    assert artifact["version"] == 1 and artifact["source_revision"] == 1
    assert artifact["registry_version"] == REGISTRY_VERSION
    assert artifact["runtime_module"] == "agents.native_graph:build_native"
    assert artifact["author"] == {"id": alice.pk, "name": "alice"}
    assert artifact["notes"] == "Ship it" and artifact["evaluation"] is None
    assert artifact["subflows"] == [] and artifact["version_id"] == str(version.pk)
    assert artifact["published_at"] == version.created_at.isoformat()


def test_it_lists_every_version_reached_transitively(alice: Any, acme: Any) -> None:
    leaf = published(alice, acme, prompt_graph("Leaf: {input}"), "Leaf")
    middle = published(alice, acme, flow_graph("subflow", str(leaf.pk)), "Middle")
    top = published(alice, acme, flow_graph("map", str(middle.pk)), "Top")
    subflows = top.artifact["subflows"]
    assert [s["version_id"] for s in subflows] == sorted([str(leaf.pk), str(middle.pk)])
    for entry in subflows:
        assert entry["content_sha256"] == content_sha256(entry["graph"])
    assert schema_errors("artifact.v1", top.artifact) == []


def test_it_cannot_make_a_version_that_reaches_itself(alice: Any, acme: Any) -> None:
    # A graph may only name versions that exist when it is published, and a version's
    # ID is made when it is inserted: so every version reaches only older ones.
    design = make_design(alice, acme)
    first = publish(alice, design)
    save(alice, design, flow_graph("loop", str(first.pk), max_iterations="2"))
    second = publish(alice, design)
    reached = {s["version_id"] for s in second.artifact["subflows"]}
    assert reached == {str(first.pk)} and str(second.pk) not in reached
    assert first.artifact["subflows"] == []


def test_it_refuses_to_store_an_artifact_outside_the_schema(alice: Any, acme: Any) -> None:
    with pytest.raises(ArtifactInvalid):
        build_artifact(number=0, sha="nothex", graph={}, revision=1, user=alice, notes="",
                       evaluation=None, subflows=[], design_id="d", version_id="v",
                       published_at="now")
