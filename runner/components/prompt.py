"""prompt: a template with `{input}` replaced once, literally.

str.replace scans the template once, so an `{input}` inside the substituted text is
never expanded again, and nothing else in the template is interpreted (no format
specs, no attribute access): graphs hold no code.
"""

from __future__ import annotations

from typing import Any

from contracts.conversions import to_text
from contracts.types import PortType
from runner.context import NodeContext, NodeOutput


def substitute(template: str, text: str) -> str:
    return template.replace("{input}", text)


def run_prompt(ctx: NodeContext, value: Any, vtype: PortType) -> NodeOutput:
    return NodeOutput("out", substitute(ctx.required("template"), to_text(value, vtype)))
