"""GET /api/v1/agent-designs/components says what the reference's Components table
says: each kind's accepted input types, output ports, settings (required ones marked
`*`, ranges with their defaults, choices), side effects, timeout and retries.

REFERENCE_TABLE is the table copied verbatim from agent-graph-reference.md
("Components"), with the sentence after it that gives five kinds an error output: the
test parses it, so a change of either side shows here as a difference."""

# ruff: noqa: E501 - the reference's table rows are kept verbatim, however long

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from contracts.types import ALL_TYPES
from tests.conftest import Api

URL = "/api/v1/agent-designs/components"

REFERENCE_TABLE = """\
Kind	Input accepts	Output	Settings	Side effects	Timeout / retries
input	none	out: text	none	no	1 s / 0
output	text, chat, json, documents	none	none	no	1 s / 0
prompt	text, chat, json, documents	out: text	template*	no	1 s / 0
model	text, chat	out: text	model (llm or a Kionga model ID), system	no	60 s / 1
tool	text, json	out: json	tool* (registered tool)	yes	30 s / 0
api	text, json	out: json	connection*, request	yes	15 s / 0
knowledge	text, chat	out: documents	knowledge_base*, query ({input}), limit 1–20 (4)	no	15 s / 1
storage	any (optional)	out: documents	dataset, key	no	15 s / 1
condition	text, chat, json, documents	true, false: text	expression*	no	1 s / 0
memory	text, chat	out: chat	strategy (window, none), turns 1–50 (6)	no	5 s / 0
extract	json, text	out: json	path* (dotted keys and list indexes), missing (fail, empty)	no	1 s / 0
router	any	route_1–route_4, default: text	route_1* to route_4 (conditions, checked in order)	no	1 s / 0
join	any	out: json	require (any, all)	no	1 s / 0
subflow	text, chat, json, documents	out: text, error	subflow* (published version)	no	120 s / 0
map	json, text	out: json, error	subflow*, max_items 1–20 (10), concurrency 1–4 (4)	no	120 s / 0
loop	text, chat, json	out, exhausted: text, error	subflow, until, max_iterations 1–10 (3)	no	180 s / 0
approval	any	approved, rejected: text	message, timeout_seconds 10–290 (120)	no	300 s / 0
"""
ERROR_OUTPUT_SENTENCE = "model, tool, api, knowledge and storage also have an error output."


@dataclass
class Row:
    """What one row of the table says about a kind, in the registry document's terms."""

    inputs: list[str]
    input_optional: bool
    outputs: list[tuple[str, list[str]]]
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    side_effects: bool = False
    timeout_seconds: int = 0
    retries: int = 0


def top_level_items(text: str) -> list[str]:
    """Split at commas outside parentheses."""
    items, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(current.strip())
            current = ""
        else:
            current += char
    return [*items, current.strip()] if current.strip() else items


def parse_inputs(text: str) -> tuple[list[str], bool]:
    if text == "none":
        return [], False
    if text.startswith("any"):
        return list(ALL_TYPES), text == "any (optional)"
    return [t.strip() for t in text.split(",")], False


def parse_outputs(text: str, has_error: bool) -> list[tuple[str, list[str]]]:
    if text == "none":
        return []
    names, types = (part.strip() for part in text.split(":"))
    ports = []
    for name in (n.strip() for n in names.split(",")):
        if ranged := re.fullmatch(r"(\w+)_(\d)–\1_(\d)", name):
            stem, low, high = ranged.groups()
            ports += [f"{stem}_{i}" for i in range(int(low), int(high) + 1)]
        else:
            ports.append(name)
    port_types = [t.strip() for t in types.split(",")]
    if "error" in port_types:  # "out: text, error": an error output besides
        port_types.remove("error")
        has_error = True
    outputs = [(port, port_types) for port in ports]
    return outputs + [("error", ["text"])] if has_error else outputs


def parse_settings(text: str) -> dict[str, dict[str, Any]]:
    settings: dict[str, dict[str, Any]] = {}
    if text == "none":
        return settings
    for item in top_level_items(text):
        if spread := re.fullmatch(r"(\w+)_(\d)(\*?) to \1_(\d) \(.*\)", item):
            stem, low, star, high = spread.groups()
            for i in range(int(low), int(high) + 1):
                settings[f"{stem}_{i}"] = {"required": bool(star) and i == int(low)}
            continue
        found = re.fullmatch(r"(\w+)(\*?)(?: (\d+)–(\d+))?(?: \((.*)\))?", item)
        assert found, item
        name, star, low, high, note = found.groups()
        setting: dict[str, Any] = {"required": bool(star)}
        if low is not None:
            setting.update(minimum=int(low), maximum=int(high), default=note)
        elif note and re.fullmatch(r"[a-z]+(, [a-z]+)+", note):
            setting["choices"] = note.split(", ")
        settings[name] = setting
    return settings


def reference_rows() -> dict[str, Row]:
    with_error = {k.strip() for k in ERROR_OUTPUT_SENTENCE.split(" also ")[0]
                  .replace(" and ", ", ").split(",")}
    rows = {}
    for line in REFERENCE_TABLE.splitlines()[1:]:
        kind, accepts, output, settings, side_effects, limits = line.split("\t")
        inputs, optional = parse_inputs(accepts)
        timeout, retries = re.fullmatch(r"(\d+) s / (\d+)", limits).groups()  # type: ignore[union-attr]
        rows[kind] = Row(inputs, optional, parse_outputs(output, kind in with_error),
                         parse_settings(settings), side_effects == "yes", int(timeout),
                         int(retries))
    return rows


def served_row(component: dict[str, Any], said: dict[str, dict[str, Any]]) -> Row:
    """The served component in a Row, with only the setting facts the table states."""
    settings = {s["name"]: {key: s[key] for key in said.get(s["name"], {"required": 0})}
                for s in component["settings"]}
    inputs = component["inputs"][0]["types"] if component["inputs"] else []
    return Row(inputs, component["input_optional"],
               [(p["name"], p["types"]) for p in component["outputs"]], settings,
               component["side_effects"], component["timeout_seconds"], component["retries"])


def test_the_table_parses_as_the_reference_writes_it() -> None:
    rows = reference_rows()
    assert len(rows) == 17
    assert rows["storage"].settings == {"dataset": {"required": False},
                                        "key": {"required": False}}
    assert rows["storage"].input_optional and rows["storage"].outputs[-1][0] == "error"
    assert rows["loop"].settings["subflow"] == {"required": False}
    assert rows["router"].settings["route_1"] == {"required": True}
    assert rows["router"].settings["route_4"] == {"required": False}
    assert rows["memory"].settings["strategy"] == {"required": False,
                                                   "choices": ["window", "none"]}
    assert rows["map"].settings["max_items"] == {"required": False, "minimum": 1,
                                                 "maximum": 20, "default": "10"}


def test_the_served_registry_matches_the_reference_table(api: Api, bob: Any) -> None:
    served = api.client_for(bob).get(URL).json()["components"]
    expected = reference_rows()
    assert [c["kind"] for c in served] == list(expected)
    differences = []
    for component in served:
        row = expected[component["kind"]]
        got = served_row(component, row.settings)
        differences += [(component["kind"], name, value, getattr(got, name))
                        for name, value in vars(row).items() if getattr(got, name) != value]
    assert differences == []  # (kind, field, reference, served)
