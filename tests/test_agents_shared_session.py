"""The agent runtime's one HTTP session (agents/client.py), shared by every caller's
turns: a model's streamed answer is read whole over a kept-alive connection, a cookie a
peer sets is never sent back on another turn's request, and a redirect is not followed
with the credential."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agents.client import AiohttpChat, SharedSession
from agents.runtime import Gateway
from runner.backends.openai import OpenAIBackend
from runner.request import LLMConfig
from tests.loopback import QuietHandler, serving

SEEN: list[dict[str, Any]] = []


class Peer(QuietHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, chunked bodies

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.read_body()
        SEEN.append({"client": self.client_address, "path": self.path,
                     "cookie": self.headers.get("Cookie"),
                     "authorization": self.headers.get("Authorization")})
        if self.path.endswith("/moved"):
            self.send_response(307)
            self.send_header("Location", "/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path.endswith("/chat/completions"):
            return self.stream()
        data = json.dumps({"turn_id": "t"}).encode()
        self.send_response(201)
        self.send_header("Set-Cookie", "session=alice-secret; Path=/")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        pieces = [{"choices": [{"index": 0, "delta": {"content": "hello"}}]},
                  {"choices": [{"index": 0, "delta": {"content": " world"}}]},
                  {"choices": [], "usage": {"total_tokens": 7}}]
        for data in [*(f"data: {json.dumps(p)}\r\n\r\n" for p in pieces), "data: [DONE]\n\n"]:
            raw = data.encode()
            self.wfile.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")


def test_model_answers_are_read_whole_on_one_kept_alive_connection() -> None:
    SEEN.clear()

    async def three(url: str) -> list[tuple[str, int]]:
        shared = SharedSession()
        backend = OpenAIBackend(LLMConfig(backend="openai", base_url=f"{url}/v1"),
                                http=AiohttpChat(shared))
        deltas: list[str] = []

        async def on_delta(piece: str) -> None:
            deltas.append(piece)

        try:
            done = [await backend.complete([{"role": "user", "content": "hi"}], on_delta)
                    for _ in range(3)]
        finally:
            await shared.aclose()
        assert deltas == ["hello", " world"] * 3
        return [(c.text, c.tokens) for c in done]

    with serving(Peer) as url:
        assert asyncio.run(three(url)) == [("hello world", 7)] * 3
    assert len({seen["client"] for seen in SEEN}) == 1


def test_a_cookie_set_for_one_turn_is_not_sent_on_the_next() -> None:
    SEEN.clear()

    async def two(url: str) -> None:
        shared = SharedSession()
        # By name: a cookie jar keeps no cookie of a bare IP address.
        gateway = Gateway(f"{url.replace('127.0.0.1', 'localhost')}/api/v1", "kag_agent",
                          shared)
        try:
            for key in ("kak_alice", "kak_mallory"):
                assert (await gateway.post("agent-turns", {}, key)).status == 201
        finally:
            await shared.aclose()

    with serving(Peer) as url:
        asyncio.run(two(url))
    assert [seen["cookie"] for seen in SEEN] == [None, None]


def test_a_redirect_is_answered_not_followed_with_the_credential() -> None:
    SEEN.clear()

    async def moved(url: str) -> int:
        shared = SharedSession()
        try:
            return (await Gateway(f"{url}/api/v1", "kag_agent", shared).post("moved", {})).status
        finally:
            await shared.aclose()

    with serving(Peer) as url:
        assert asyncio.run(moved(url)) == 307
    assert [seen["path"] for seen in SEEN] == ["/api/v1/moved"]
    assert SEEN[0]["authorization"] == "Bearer kag_agent"
