"""prompt: a template with `{input}` replaced once, literally.

str.replace scans the template once, so an `{input}` inside the substituted text is
never expanded again, and nothing else in the template is interpreted (no format
specs, no attribute access): graphs hold no code. A template may hold `{input}`
thousands of times, so the size of the result is checked before it is built.
"""

from __future__ import annotations

from typing import Any, Final

from contracts.conversions import to_text
from contracts.registry import LIMITS
from contracts.types import PortType
from runner.components import implements
from runner.context import NodeContext, NodeOutput
from runner.failures import NodeFailure

PLACEHOLDER: Final = "{input}"
VALUE_CHARS: Final = LIMITS["value_chars"]


def substitute(template: str, text: str) -> str:
    """The template with every `{input}` replaced by text; node_error past VALUE_CHARS."""
    count = template.count(PLACEHOLDER)
    size = len(template) + count * (len(text) - len(PLACEHOLDER))
    if size > VALUE_CHARS:
        raise NodeFailure("node_error", f"the filled template would have {size:,} characters "
                                        f"({count:,} × {{input}} of {len(text):,}); "
                                        f"at most {VALUE_CHARS:,}")
    return template.replace(PLACEHOLDER, text)


@implements("prompt")
def run_prompt(ctx: NodeContext, value: Any, vtype: PortType) -> NodeOutput:
    return NodeOutput("out", substitute(ctx.required("template"), to_text(value, vtype)))
