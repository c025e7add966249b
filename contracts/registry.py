"""The component registry: every kind, its ports, settings, side effects and limits.

This is data. The validator, the engine, the components API and the canvas all read
it; nothing else hard-codes what a kind accepts. Config values are always strings
(the graph document says so); `integer` and `choice` settings are strings that must
parse as such.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Final, Literal

from contracts.types import ALL_TYPES, PortType

REGISTRY_VERSION: Final = "2.0.0"

SettingType = Literal["string", "template", "integer", "choice", "condition", "resource"]
ResourceKind = Literal["model", "function", "connection", "knowledge_base", "dataset", "version"]


@dataclass(frozen=True)
class Port:
    name: str
    types: tuple[PortType, ...]


@dataclass(frozen=True)
class Setting:
    name: str
    label: str
    help: str
    type: SettingType = "string"
    required: bool = False
    default: str | None = None
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    # Which platform resource an ID setting names (validated against the project).
    resource: ResourceKind | None = None
    # For an optional setting the node does nothing useful without: what the node does
    # when it is empty (the validator warns with it: missing_optional_config).
    when_empty: str | None = None


@dataclass(frozen=True)
class Component:
    kind: str
    label: str
    help: str
    inputs: tuple[Port, ...]
    outputs: tuple[Port, ...]
    settings: tuple[Setting, ...] = ()
    side_effects: bool = False
    timeout_seconds: int = 1
    retries: int = 0
    # The input port may stay unconnected (storage reads on its own).
    input_optional: bool = False
    # Never runs on nothing: without an inbound edge the node is skipped instead of
    # running on empty text (an approval would ask people about nothing).
    needs_value: bool = False
    # Ports that carry failures (model, tool, ...): the redacted message as text.
    error_port: bool = False
    # How the engine runs the kind (it branches on these, never on the kind):
    # pure: CPU only on the incoming value, run inline (no timeout, no retries);
    # streams: its text is streamed as node.delta while it runs;
    # all_inputs_when: (setting, value) with which the node runs only when every
    # inbound edge carried a value (otherwise it is skipped).
    pure: bool = False
    streams: bool = False
    all_inputs_when: tuple[str, str] | None = None

    @property
    def input_types(self) -> tuple[PortType, ...]:
        return self.inputs[0].types if self.inputs else ()

    def output(self, name: str) -> Port | None:
        return next((p for p in self.outputs if p.name == name), None)

    def setting(self, name: str) -> Setting | None:
        return next((s for s in self.settings if s.name == name), None)

    @property
    def default_output(self) -> str | None:
        return self.outputs[0].name if self.outputs else None

    @property
    def default_input(self) -> str | None:
        return self.inputs[0].name if self.inputs else None


TEXT_LIKE: Final[tuple[PortType, ...]] = ("text", "chat", "json", "documents")


def _in(*types: PortType) -> tuple[Port, ...]:
    return (Port("in", types),)


def _out(type_: PortType, *names: str) -> tuple[Port, ...]:
    return tuple(Port(n, (type_,)) for n in (names or ("out",)))


_ERROR = Port("error", ("text",))
# The published version that subflow, map and loop run (optional for a loop only, as
# the reference's table has it).
_FLOW = Setting("subflow", "Flow", "A published version ID.", "resource", True,
                resource="version")
_LOOP_FLOW = replace(_FLOW, required=False,
                     when_empty="runs nothing: its input passes through unchanged, on out "
                                "when until is empty or holds for it, else on exhausted")

_ROUTES = tuple(
    Setting(
        f"route_{i}",
        f"Route {i}",
        f"Condition for route_{i}; routes are checked in order, the first true one fires.",
        type="condition",
        required=i == 1,
    )
    for i in range(1, 5)
)

COMPONENTS: Final[dict[str, Component]] = {
    c.kind: c
    for c in (
        Component("input", "Input", "Where a run's input text enters.", (), _out("text"),
                  pure=True),
        Component("output", "Output", "The run's final answer.", _in(*TEXT_LIKE), (), pure=True),
        Component(
            "prompt",
            "Prompt",
            "Fills a template; {input} is replaced once, literally, by the incoming text.",
            _in(*TEXT_LIKE),
            _out("text"),
            (Setting("template", "Template", "Text with {input}.", "template", True),),
            pure=True,
        ),
        Component(
            "model",
            "Model",
            "Asks a chat model. `llm` is the platform model; otherwise a Kionga model ID.",
            _in("text", "chat"),
            (*_out("text"), _ERROR),
            (
                Setting("model", "Model", "`llm` or a Kionga model ID.", default="llm",
                        resource="model"),
                Setting("system", "System prompt", "Instructions sent before the input."),
            ),
            timeout_seconds=60,
            retries=1,
            error_port=True,
            streams=True,
        ),
        Component(
            "tool",
            "Tool",
            "Calls a registered tool. Needs allow_side_effects in the playground.",
            _in("text", "json"),
            (*_out("json"), _ERROR),
            (Setting("tool", "Tool", "A registered tool's name.", "resource", True,
                     resource="function"),),
            side_effects=True,
            timeout_seconds=30,
            error_port=True,
        ),
        Component(
            "api",
            "API call",
            "Calls an API connection. Needs allow_side_effects in the playground.",
            _in("text", "json"),
            (*_out("json"), _ERROR),
            (
                Setting("connection", "Connection", "An API connection ID.", "resource", True,
                        resource="connection"),
                Setting("request", "Request", "`METHOD /path`, e.g. `POST /tickets`.",
                        default="POST /"),
            ),
            side_effects=True,
            timeout_seconds=15,
            error_port=True,
        ),
        Component(
            "knowledge",
            "Knowledge",
            "Searches a knowledge base and returns the best documents.",
            _in("text", "chat"),
            (*_out("documents"), _ERROR),
            (
                Setting("knowledge_base", "Knowledge base", "A knowledge base ID.", "resource",
                        True, resource="knowledge_base"),
                Setting("query", "Query", "Query template; {input} is the incoming text.",
                        "template", default="{input}"),
                Setting("limit", "Limit", "How many documents, 1–20.", "integer", default="4",
                        minimum=1, maximum=20),
            ),
            timeout_seconds=15,
            retries=1,
            error_port=True,
        ),
        Component(
            "storage",
            "Storage",
            "Reads an object from a dataset.",
            _in(*ALL_TYPES),
            (*_out("documents"), _ERROR),
            (
                Setting("dataset", "Dataset", "A dataset ID.", "resource", resource="dataset",
                        when_empty="reads nothing and passes on an empty list of documents"),
                Setting("key", "Key", "The object's key; {input} is the incoming text.",
                        "template"),
            ),
            timeout_seconds=15,
            retries=1,
            input_optional=True,
            error_port=True,
        ),
        Component(
            "condition",
            "Condition",
            "Sends the value to `true` or `false`.",
            _in(*TEXT_LIKE),
            _out("text", "true", "false"),
            (Setting("expression", "Expression", "e.g. contains:refund", "condition", True),),
            pure=True,
        ),
        Component(
            "memory",
            "Memory",
            "Adds the last turns of the conversation (history / session_id).",
            _in("text", "chat"),
            _out("chat"),
            (
                Setting("strategy", "Strategy", "window or none.", "choice", default="window",
                        choices=("window", "none")),
                Setting("turns", "Turns", "Window size, 1–50.", "integer", default="6",
                        minimum=1, maximum=50),
            ),
            timeout_seconds=5,
            pure=True,
        ),
        Component(
            "extract",
            "Extract",
            "Picks a value out of JSON by a dotted path, e.g. items.0.name.",
            _in("json", "text"),
            _out("json"),
            (
                Setting("path", "Path", "Dotted keys and list indexes.", required=True),
                Setting("missing", "When missing", "fail or empty.", "choice", default="fail",
                        choices=("fail", "empty")),
            ),
            pure=True,
        ),
        Component(
            "router",
            "Router",
            "Checks route_1..route_4 in order; the first true fires, else `default`.",
            _in(*ALL_TYPES),
            _out("text", "route_1", "route_2", "route_3", "route_4", "default"),
            _ROUTES,
            pure=True,
        ),
        Component(
            "join",
            "Join",
            "Merges its inbound values into one JSON object keyed by source node.",
            _in(*ALL_TYPES),
            _out("json"),
            (Setting("require", "Require", "any or all inbound values.", "choice",
                     default="any", choices=("any", "all")),),
            pure=True,
            all_inputs_when=("require", "all"),
        ),
        Component(
            "subflow",
            "Subflow",
            "Runs a published version with the incoming value.",
            _in(*TEXT_LIKE),
            (*_out("text"), _ERROR),
            (_FLOW,),
            timeout_seconds=120,
        ),
        Component(
            "map",
            "Map",
            "Runs a published version once per list item.",
            _in("json", "text"),
            (*_out("json"), _ERROR),
            (
                _FLOW,
                Setting("max_items", "Max items", "1–20.", "integer", default="10",
                        minimum=1, maximum=20),
                Setting("concurrency", "Concurrency", "1–4.", "integer", default="4",
                        minimum=1, maximum=4),
            ),
            timeout_seconds=120,
        ),
        Component(
            "loop",
            "Loop",
            "Runs a published version repeatedly until a condition holds.",
            _in("text", "chat", "json"),
            (*_out("text", "out", "exhausted"), _ERROR),
            (
                _LOOP_FLOW,
                Setting("until", "Until", "Condition checked after each iteration.",
                        "condition"),
                Setting("max_iterations", "Max iterations", "1–10.", "integer", default="3",
                        minimum=1, maximum=10),
            ),
            timeout_seconds=180,
        ),
        Component(
            "approval",
            "Approval",
            "Waits for a person to approve or reject.",
            _in(*ALL_TYPES),
            _out("text", "approved", "rejected"),
            (
                Setting("message", "Message", "What the approver is asked.", "template"),
                Setting("timeout_seconds", "Timeout", "10–290 seconds.", "integer",
                        default="120", minimum=10, maximum=290),
            ),
            timeout_seconds=300,
            needs_value=True,
        ),
    )
}


def registry_document() -> dict[str, Any]:
    """The registry as JSON, for GET /components and `kionga capabilities`."""
    from contracts.conditions import OPERATORS
    from contracts.conversions import CONVERSIONS

    def comp_doc(c: Component) -> dict[str, Any]:
        doc = asdict(c)
        doc["inputs"] = [{"name": p.name, "types": list(p.types)} for p in c.inputs]
        doc["outputs"] = [{"name": p.name, "types": list(p.types)} for p in c.outputs]
        doc["settings"] = [{k: v for k, v in asdict(s).items()} for s in c.settings]
        for s in doc["settings"]:
            s["choices"] = list(s["choices"])
        return doc

    return {
        "registry_version": REGISTRY_VERSION,
        "types": list(ALL_TYPES),
        "components": [comp_doc(c) for c in COMPONENTS.values()],
        "conversions": [
            {"from": src, "to": dst, "description": desc}
            for (src, dst), desc in CONVERSIONS.items()
        ],
        "condition_operators": [
            {"name": op.name, "argument": op.argument, "help": op.help} for op in OPERATORS.values()
        ],
        "limits": LIMITS,
    }


LIMITS: Final[dict[str, int]] = {
    "min_nodes": 2,
    "max_nodes": 100,
    "max_edges": 300,
    "max_config_keys": 30,
    "max_config_value_chars": 16_000,
    "max_regex_chars": 200,
    "preview_chars": 2_000,
    "output_bytes": 64 * 1024,
    # A model's text on node.completed, and its deltas (per attempt), are cut here.
    "model_text_bytes": 64 * 1024,
    # The longest text a node may produce: a filled template or a model's answer.
    "value_chars": 1_000_000,
}

# Hard ceilings on what the gateway accepts at all, well above LIMITS: drafts with
# errors (too many nodes, ...) may still be saved, but a body past these is refused
# before any parsing or validation work (413 payload_too_large).
CEILINGS: Final[dict[str, int]] = {
    "max_draft_nodes": 1_000,
    "max_draft_edges": 3_000,
    "max_body_bytes": 1024 * 1024,
}

SETTINGS_RANGES: Final[dict[str, tuple[int, int, int]]] = {
    # name: (minimum, maximum, default)
    "max_steps": (1, 200, 50),
    "timeout_seconds": (1, 300, 60),
    "max_tokens": (1, 1_000_000, 50_000),
}

