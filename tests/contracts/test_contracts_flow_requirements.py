"""Validator and engine agree: a loop needs a published version and storage a dataset.

Both passed validation and then always failed at run time (the engine reads them with
ctx.required). One truth: the registry marks them required, the validator reports the
missing setting, and the components API says so.
"""

from __future__ import annotations

import pytest
from contracts_kit import chain, check, node

from contracts.registry import COMPONENTS, registry_document


@pytest.mark.parametrize(("kind", "setting"), [("loop", "subflow"), ("storage", "dataset")])
def test_it_refuses_the_node_without_its_resource(kind: str, setting: str) -> None:
    for config in ({}, {setting: ""}):
        report = check(chain(node("n", kind, **config)))
        assert not report.runnable
        issue = next(i for i in report.issues if i.code == "missing_required_config")
        assert issue.path == f"nodes.1.config.{setting}" and issue.node_id == "n"


@pytest.mark.parametrize(("kind", "setting"), [("loop", "subflow"), ("storage", "dataset")])
def test_it_accepts_the_node_with_its_resource(kind: str, setting: str) -> None:
    assert check(chain(node("n", kind, **{setting: "some-id"}))).runnable


def test_it_says_so_in_the_components_document() -> None:
    assert COMPONENTS["loop"].setting("subflow").required  # type: ignore[union-attr]
    kinds = {k["kind"]: k for k in registry_document()["components"]}
    settings = {s["name"]: s for s in kinds["storage"]["settings"]}
    assert settings["dataset"]["required"] is True
