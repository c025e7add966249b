"""Each component's settings: required ones, integer ranges, choices, conditions, paths."""

from __future__ import annotations

from typing import Any

import pytest
from contracts_kit import chain, check, errors, graph, node

from contracts.registry import COMPONENTS, Setting

# A value that passes, per setting type; resources are opaque IDs.
GOOD = {"string": "x", "template": "Hi {input}", "condition": "contains:x", "resource": "id-1"}
MIDDLE_KINDS = sorted(k for k in COMPONENTS if k not in ("input", "output"))


def required_config(kind: str) -> dict[str, str]:
    return {s.name: good_value(s) for s in COMPONENTS[kind].settings if s.required}


def good_value(setting: Setting) -> str:
    if setting.type == "integer":
        return str(setting.minimum)
    if setting.type == "choice":
        return setting.choices[0]
    if setting.name == "path":
        return "items.0.name"
    return GOOD[setting.type]


def one_node(kind: str, **config: Any) -> dict[str, Any]:
    return chain(node("n", kind, **{**required_config(kind), **config}))


def settings_of(kind_type: str) -> list[tuple[str, Setting]]:
    return [(k, s) for k in MIDDLE_KINDS for s in COMPONENTS[k].settings if s.type == kind_type]


def test_it_has_the_reference_required_settings() -> None:
    required = {k: sorted(required_config(k)) for k in COMPONENTS if required_config(k)}
    assert required == {
        "prompt": ["template"], "tool": ["tool"], "api": ["connection"],
        "knowledge": ["knowledge_base"], "condition": ["expression"], "extract": ["path"],
        "router": ["route_1"], "subflow": ["subflow"], "map": ["subflow"],
    }


@pytest.mark.parametrize("kind", MIDDLE_KINDS)
def test_it_accepts_each_kind_with_its_required_settings(kind: str) -> None:
    report = check(one_node(kind))
    assert report.runnable, report.issues


@pytest.mark.parametrize(("kind", "name"), [
    (k, s.name) for k in MIDDLE_KINDS for s in COMPONENTS[k].settings if s.required])
def test_it_requires_each_required_setting(kind: str, name: str) -> None:
    for config in ({n: v for n, v in required_config(kind).items() if n != name},
                   {**required_config(kind), name: ""}):
        doc = chain(node("n", kind, **config))
        expected = [("missing_required_config", f"nodes.1.config.{name}")]
        if kind == "router":  # and the default port, route_1, has no condition
            expected.append(("unknown_port", "edges.1.from_port"))
        assert errors(check(doc)) == expected


@pytest.mark.parametrize(("kind", "setting"), settings_of("integer"),
                         ids=[f"{k}.{s.name}" for k, s in settings_of("integer")])
def test_it_checks_each_integer_range(kind: str, setting: Setting) -> None:
    assert setting.minimum is not None and setting.maximum is not None
    for good in (setting.minimum, setting.maximum, setting.default):
        assert check(one_node(kind, **{setting.name: str(good)})).runnable
    for bad in (str(setting.minimum - 1), str(setting.maximum + 1), "-1", "1.5", "four",
                " 4", "4 ", "0x4", "9" * 40, "４"):
        assert errors(check(one_node(kind, **{setting.name: bad}))) == [
            ("invalid_config_value", f"nodes.1.config.{setting.name}")], bad


def test_it_has_the_reference_ranges_and_defaults() -> None:
    ranges = {f"{k}.{s.name}": (s.minimum, s.maximum, s.default)
              for k, s in settings_of("integer")}
    assert ranges == {
        "knowledge.limit": (1, 20, "4"), "memory.turns": (1, 50, "6"),
        "map.max_items": (1, 20, "10"), "map.concurrency": (1, 4, "4"),
        "loop.max_iterations": (1, 10, "3"), "approval.timeout_seconds": (10, 290, "120"),
    }


@pytest.mark.parametrize(("kind", "setting"), settings_of("choice"),
                         ids=[f"{k}.{s.name}" for k, s in settings_of("choice")])
def test_it_checks_each_choice(kind: str, setting: Setting) -> None:
    for good in setting.choices:
        assert check(one_node(kind, **{setting.name: good})).runnable
    for bad in ("other", setting.choices[0].upper(), f" {setting.choices[0]}"):
        assert errors(check(one_node(kind, **{setting.name: bad}))) == [
            ("invalid_config_value", f"nodes.1.config.{setting.name}")]


def test_it_has_the_reference_choices_and_defaults() -> None:
    choices = {f"{k}.{s.name}": (s.choices, s.default) for k, s in settings_of("choice")}
    assert choices == {"memory.strategy": (("window", "none"), "window"),
                       "extract.missing": (("fail", "empty"), "fail"),
                       "join.require": (("any", "all"), "any")}


@pytest.mark.parametrize(("kind", "setting"), settings_of("condition"),
                         ids=[f"{k}.{s.name}" for k, s in settings_of("condition")])
def test_it_parses_each_condition_setting(kind: str, setting: Setting) -> None:
    assert check(one_node(kind, **{setting.name: "matches:(?i)^refund"})).runnable
    path = f"nodes.1.config.{setting.name}"
    assert errors(check(one_node(kind, **{setting.name: "refund"}))) == [
        ("invalid_condition", path)]
    assert errors(check(one_node(kind, **{setting.name: "matches:(a)\\1"}))) == [
        ("invalid_regex", path)]


@pytest.mark.parametrize("path", ["name", "items.0.name", "a.b.c.d", "0", "items.-1",
                                  "with space.x"])
def test_it_accepts_extract_paths(path: str) -> None:
    assert check(one_node("extract", path=path)).runnable


@pytest.mark.parametrize("path", [".", "a.", ".a", "a..b", "items..0"])
def test_it_refuses_extract_paths_with_empty_segments(path: str) -> None:
    assert errors(check(one_node("extract", path=path))) == [
        ("invalid_config_value", "nodes.1.config.path")]


@pytest.mark.parametrize("kind", sorted(COMPONENTS))
def test_it_refuses_a_key_the_kind_does_not_have(kind: str) -> None:
    doc = one_node(kind, not_a_setting="x") if kind not in ("input", "output") else graph(
        [node("in", "input", **({"not_a_setting": "x"} if kind == "input" else {})),
         node("out", "output", **({"not_a_setting": "x"} if kind == "output" else {}))],
        [{"from": "in", "to": "out"}])
    index = 1 if kind not in ("input", "output") else (0 if kind == "input" else 1)
    assert errors(check(doc)) == [("unknown_config_key", f"nodes.{index}.config.not_a_setting")]


def test_it_routes_loop_and_storage_without_their_optional_ids() -> None:
    assert check(one_node("loop")).runnable
    assert check(one_node("storage")).runnable
