"""input and output: where a run's text enters and where its answer leaves."""

from __future__ import annotations

from typing import Any

from contracts.conversions import to_text
from contracts.types import PortType
from runner.components import implements
from runner.context import NodeContext, NodeOutput


@implements("input")
def run_input(ctx: NodeContext, value: Any, vtype: PortType) -> NodeOutput:
    return NodeOutput("out", ctx.run.input)


@implements("output")
def run_output(ctx: NodeContext, value: Any, vtype: PortType) -> NodeOutput:
    # The output node has no port; its value (as text) is the run's output.
    return NodeOutput("", to_text(value, vtype))
