"""Model backends behind `model: llm` (MLAIOPS_LLM_BACKEND: mock or openai)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from runner.failures import NodeFailure
from runner.request import LLMConfig

OnDelta = Callable[[str], Awaitable[None]]
Messages = list[dict[str, Any]]


@dataclass(frozen=True)
class Completion:
    text: str
    tokens: int


class ModelBackend(Protocol):
    name: str
    # The mock backend cannot judge: an evaluation must fail its judged cases.
    can_judge: bool

    async def complete(self, messages: Messages, on_delta: OnDelta) -> Completion:
        """Stream a chat completion, calling on_delta for each piece of text."""
        ...


def make_backend(config: LLMConfig) -> ModelBackend:
    from runner.backends.mock import MockBackend
    from runner.backends.openai import OpenAIBackend

    if config.backend in ("", "mock"):
        return MockBackend()
    if config.backend == "openai":
        return OpenAIBackend(config)
    return _Unknown(config.backend)


def count_words(messages: Messages) -> int:
    return sum(len(_content(m).split()) for m in messages)


def last_user_text(messages: Messages) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return _content(message)
    return _content(messages[-1]) if messages else ""


def _content(message: dict[str, Any]) -> str:
    content = message.get("content", "")
    return content if isinstance(content, str) else str(content)


class _Unknown:
    can_judge = False

    def __init__(self, name: str) -> None:
        self.name = name

    async def complete(self, messages: Messages, on_delta: OnDelta) -> Completion:
        raise NodeFailure("node_error", f"unknown model backend {self.name!r} (use mock or openai)")
