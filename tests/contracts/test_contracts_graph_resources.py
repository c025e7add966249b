"""graph_resources: the scope of a run's credential is exactly the resource IDs the
validator checked in the project, whatever the graph names."""

from __future__ import annotations

from typing import Any

from contracts_kit import chain, node
from hypothesis import given
from hypothesis import strategies as st

from contracts.registry import ResourceKind
from contracts.resources import graph_resources
from contracts.validate import validate_graph

# (node kind, setting, resource kind) of every resource setting in the registry.
SETTINGS = [("model", "model"), ("tool", "tool"), ("api", "connection"),
            ("knowledge", "knowledge_base"), ("storage", "dataset"), ("subflow", "subflow"),
            ("map", "subflow"), ("loop", "subflow")]


class Everything:
    """A ResourceCheck where every ID exists; records the questions."""

    def __init__(self) -> None:
        self.asked: set[tuple[str, str]] = set()

    def exists(self, kind: ResourceKind, resource_id: str) -> bool:
        self.asked.add((kind, resource_id))
        return True


ids = st.sampled_from(["", "llm", "a", "b-1", "kb_2", "llm2"])
nodes = st.lists(st.tuples(st.sampled_from(SETTINGS), ids), max_size=12)


@given(nodes)
def test_it_names_exactly_what_the_validator_checked(picked: list[Any]) -> None:
    doc = chain(*[node(f"n{i}", kind, **{setting: value})
                  for i, ((kind, setting), value) in enumerate(picked)])
    checked = Everything()
    validate_graph(doc, checked)
    scope = graph_resources(doc)
    assert {(kind, key) for kind, keys in scope.items() for key in keys} == checked.asked
    assert all(keys == sorted(set(keys)) for keys in scope.values())


def test_it_leaves_out_the_platform_model_and_strips_ids() -> None:
    doc = chain(node("m", "model", model="llm"), node("t", "tool", tool=" lookup "),
                node("s", "storage"))
    assert graph_resources(doc) == {"function": ["lookup"]}
