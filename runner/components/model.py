"""model: `llm` is the platform model (the configured backend, streamed); anything else
is a Kionga model ID asked through the gateway's models/{id}/predict, streamed too."""

from __future__ import annotations

from typing import Any

from contracts.conversions import text_to_chat
from contracts.types import PortType
from runner.components import implements
from runner.components.prompt import VALUE_CHARS
from runner.context import NodeContext, NodeOutput
from runner.failures import NodeFailure


def check_size(text: str) -> None:
    """A model's answer is a value like any other: at most VALUE_CHARS."""
    if len(text) > VALUE_CHARS:
        raise NodeFailure("node_error", f"the model answered more than {VALUE_CHARS:,} "
                                        "characters")


def messages_for(ctx: NodeContext, value: Any, vtype: PortType) -> list[dict[str, Any]]:
    turns = value if vtype == "chat" else text_to_chat(value)
    system = ctx.setting("system")
    head = [{"role": "system", "content": system}] if system.strip() else []
    return head + [t for t in turns if isinstance(t, dict)]


@implements("model")
async def run_model(ctx: NodeContext, value: Any, vtype: PortType) -> NodeOutput:
    messages = messages_for(ctx, value, vtype)
    model = ctx.setting("model").strip() or "llm"
    if model == "llm":
        completion = await ctx.run.backend.complete(messages, ctx.delta)
        ctx.flush_delta()
        check_size(completion.text)
        return NodeOutput("out", completion.text, text=completion.text, tokens=completion.tokens)
    answer = await ctx.run.resources.predict(model, messages, on_delta=ctx.delta)
    ctx.flush_delta()
    text = answer.get("text")
    if not isinstance(text, str):
        raise NodeFailure("node_error", f"model {model} answered without text")
    check_size(text)
    usage = answer.get("usage")
    tokens = usage.get("tokens") if isinstance(usage, dict) else None
    if not isinstance(tokens, int):
        tokens = sum(len(str(m.get("content", "")).split()) for m in messages) + len(text.split())
    cost = usage.get("cost") if isinstance(usage, dict) else None
    return NodeOutput("out", text, text=text, tokens=tokens,
                      cost=float(cost) if isinstance(cost, int | float) else 0.0)
