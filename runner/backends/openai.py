"""Any OpenAI-compatible chat completions server (vLLM, llama.cpp, Ollama, OpenAI...).

POST {MLAIOPS_LLM_BASE_URL}/chat/completions with stream=true; Server-Sent Events
`data:` chunks until `[DONE]`. `stream_options.include_usage` asks for a final usage
chunk; servers that send none are counted like the mock (words in + words out).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol

import httpx

from contracts.registry import LIMITS
from runner.backends import Completion, Messages, OnDelta, count_words
from runner.failures import NodeFailure, http_failure_code
from runner.request import LLMConfig


class ChatAnswer(Protocol):
    """A model server's answer as it arrives: status, Content-Type header, its lines."""

    status: int
    content_type: str

    def lines(self) -> AsyncIterator[str]:
        """The body's lines, without their line ends."""
        ...

    async def body(self) -> bytes:
        ...


class ChatHttp(Protocol):
    """How the backend POSTs: `post` is entered for the answer; it raises TimeoutError
    when the server is too slow, ConnectionError when it cannot be reached or cuts the
    answer short (the answer's lines included)."""

    def post(self, url: str, body: bytes, headers: dict[str, str],
             config: LLMConfig) -> AbstractAsyncContextManager[ChatAnswer]:
        ...


class OpenAIBackend:
    name = "openai"
    can_judge = True

    def __init__(
        self, config: LLMConfig, transport: httpx.AsyncBaseTransport | None = None,
        http: ChatHttp | None = None,
    ) -> None:
        self.config = config
        # httpx over `transport` (tests may inject one; normally real HTTP), unless the
        # caller brings its own client (the agent runtime's: agents/client.py).
        self._http = http or HttpxChat(transport)

    async def complete(self, messages: Messages, on_delta: OnDelta) -> Completion:
        if not self.config.base_url:
            raise NodeFailure("node_error", "MLAIOPS_LLM_BASE_URL is not set (openai backend)")
        url = self.config.base_url.rstrip("/") + "/chat/completions"
        body = {
            "model": self.config.model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        headers = {"Accept": "text/event-stream", "Content-Type": "application/json"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":"),
                          allow_nan=False).encode("utf-8")
        try:
            async with self._http.post(url, data, headers, self.config) as response:
                if response.status >= 400:
                    raise _http_failure(response.status, await response.body())
                text, tokens = await _read(response, on_delta)
        except TimeoutError as exc:
            raise NodeFailure("timeout", f"the model server timed out: {exc}") from None
        except ConnectionError as exc:
            raise NodeFailure(
                "resource_unavailable", f"the model server cannot be reached: {exc}"
            ) from None
        if tokens is None:
            tokens = count_words(messages) + len(text.split())
        return Completion(text, tokens)


class HttpxChat:
    """ChatHttp on httpx: a client per call over `transport` (a pool lent by the
    caller), or httpx's own transport."""

    def __init__(self, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._transport = transport

    @asynccontextmanager
    async def post(self, url: str, body: bytes, headers: dict[str, str],
                   config: LLMConfig) -> AsyncIterator[ChatAnswer]:
        timeout = httpx.Timeout(config.read_timeout, connect=config.connect_timeout)
        try:
            async with httpx.AsyncClient(timeout=timeout, transport=self._transport) as client:
                async with client.stream("POST", url, content=body,
                                         headers=headers) as response:
                    yield _HttpxAnswer(response)
        except httpx.TimeoutException as exc:
            raise TimeoutError(str(exc)) from None
        except httpx.HTTPError as exc:
            raise ConnectionError(str(exc)) from None


class _HttpxAnswer:
    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self.status = response.status_code
        self.content_type = response.headers.get("content-type", "text/event-stream")

    def lines(self) -> AsyncIterator[str]:
        return self._response.aiter_lines()

    async def body(self) -> bytes:
        return await self._response.aread()


async def _read(response: ChatAnswer, on_delta: OnDelta) -> tuple[str, int | None]:
    parts: list[str] = []
    size = 0
    tokens: int | None = None
    if "text/event-stream" not in response.content_type:
        # A server that ignored stream=true: one JSON answer.
        doc = json.loads(await response.body())
        text = _message_text(doc)
        if text:
            await on_delta(text)
        return text, _usage(doc)
    done = False
    async for line in response.lines():
        # After [DONE] the body's end is still read: a response left unread closes its
        # connection instead of returning it to the pool (a new connection per call).
        if done or not line.startswith("data:"):
            continue  # comments, event:/id: lines, blank separators
        data = line[5:].strip()
        if data == "[DONE]":
            done = True
            continue
        try:
            chunk = json.loads(data)
        except ValueError:
            raise NodeFailure("node_error", "the model server sent a malformed chunk") from None
        if isinstance(chunk.get("error"), dict):
            message = chunk["error"].get("message") or "error"
            raise NodeFailure("node_error", f"the model server failed: {message}")
        tokens = _usage(chunk) if chunk.get("usage") else tokens
        for choice in chunk.get("choices") or []:
            piece = (choice.get("delta") or {}).get("content")
            if isinstance(piece, str) and piece:
                size += len(piece)
                if size > LIMITS["value_chars"]:  # stop reading: it would be refused anyway
                    raise NodeFailure("node_error", "the model server answered more than "
                                                    f"{LIMITS['value_chars']:,} characters")
                parts.append(piece)
                await on_delta(piece)
    return "".join(parts), tokens


def _usage(doc: dict[str, Any]) -> int | None:
    usage = doc.get("usage")
    if not isinstance(usage, dict):
        return None
    total = usage.get("total_tokens")
    if isinstance(total, int):
        return total
    parts = [usage.get("prompt_tokens"), usage.get("completion_tokens")]
    return sum(p for p in parts if isinstance(p, int)) if any(parts) else None


def _message_text(doc: dict[str, Any]) -> str:
    choices = doc.get("choices") or [{}]
    content = (choices[0].get("message") or {}).get("content")
    return content if isinstance(content, str) else ""


def _http_failure(status: int, body: bytes) -> NodeFailure:
    code = http_failure_code(status)
    if code == "resource_denied":
        return NodeFailure(code, f"the model server refused the request ({status})")
    text = body.decode("utf-8", errors="replace")[:300]
    return NodeFailure(code, f"the model server answered {status}: {text}")
