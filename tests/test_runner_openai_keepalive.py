"""The OpenAI-compatible backend reads a streamed answer to its end, `[DONE]` and the
body's last chunk, so its connection goes back to the pool: with a pooled transport,
consecutive completions share one connection instead of opening one each."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from runner.backends.openai import OpenAIBackend
from runner.request import LLMConfig
from tests.loopback import QuietHandler, serving

CONNECTIONS: list[Any] = []


class Streaming(QuietHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, chunked bodies

    def setup(self) -> None:
        super().setup()
        CONNECTIONS.append(self.client_address)

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.read_body()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = {"choices": [{"index": 0, "delta": {"content": "hello"}}]}
        for data in (f"data: {json.dumps(chunk)}\n\n", "data: [DONE]\n\n"):
            raw = data.encode()
            self.wfile.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")


def test_consecutive_completions_share_one_connection() -> None:
    CONNECTIONS.clear()

    async def complete_three(url: str) -> list[str]:
        async with httpx.AsyncHTTPTransport() as pool:
            backend = OpenAIBackend(LLMConfig(backend="openai", base_url=f"{url}/v1"),
                                    transport=_Lent(pool))
            texts = []

            async def on_delta(piece: str) -> None:
                return None

            for _ in range(3):
                texts.append((await backend.complete([{"role": "user", "content": "hi"}],
                                                     on_delta)).text)
            return texts

    with serving(Streaming) as url:
        assert asyncio.run(complete_three(url)) == ["hello"] * 3
    assert len(CONNECTIONS) == 1


class _Lent(httpx.AsyncBaseTransport):
    """The pool lent to the backend's short-lived clients (closing them keeps it)."""

    def __init__(self, pool: httpx.AsyncHTTPTransport) -> None:
        self.pool = pool

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self.pool.handle_async_request(request)

    async def aclose(self) -> None:
        return None
