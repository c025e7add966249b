"""The agent runtime's ASGI app (served by uvicorn: agents/serve.py).

    GET  /healthz               {"status": "ok", "version", "version_id", "content_sha256",
                                "canary": {"version", "version_id", "content_sha256",
                                "percent"} or null}
    POST /turns                 {input, session_id?, history?, stream?} -> one JSON answer
                                {turn_id, status, output, error, usage, latency_ms,
                                version_id (the version that served it)}, or with
                                `stream: true` or `Accept: text/event-stream` Server-Sent
                                Events: `turn` {turn_id}, the run's events (`id:` seq,
                                `event:` type) and deltas (`event: delta`), then `answer`
    GET  /v1/models             the agent as an OpenAI model (agents/openai_api.py)
    POST /v1/chat/completions   OpenAI chat completions, streamed or not
    *    /mcp                   MCP, streamable HTTP: one tool, the agent (agents/mcp_tool.py)
    POST /triggered-turns       {turn_id}: a turn a webhook or schedule opened (triggers/),
                                claimed on the gateway and run in the background -> 202

Everything but /healthz and /triggered-turns (whose turn ID the gateway must accept)
needs `Authorization: Bearer <agent API key>` (401; 429 with
Retry-After beyond the key's rate: the gateway decides, agents/runtime.py). Turns run
as tasks of the one event loop; a client that goes away does not end its turn (it is
run and reported all the same).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from agents import openai_api
from agents.http import (
    AUTHENTICATE,
    HttpError,
    Receive,
    Scope,
    Send,
    caller_key,
    header,
    read_json,
    send_chunk,
    send_error,
    send_json,
    sse,
    start_stream,
)
from agents.mcp_tool import McpEndpoint
from agents.runtime import CALLER_TRACEPARENT, Refused, Runtime, TurnInput
from contracts.agent_runtime import TRIGGERED_TURNS_PATH
from runner import tracing
from runner.events import Event

log = logging.getLogger("kionga.agent")


def check_turn(body: Any) -> TurnInput | None:
    """The turn of a /turns body, or None when it is not {input: str, session_id?: str,
    history?: [object], stream?: bool}."""
    if not isinstance(body, dict) or not isinstance(body.get("input", ""), str):
        return None
    if not isinstance(body.get("session_id") or "", str):
        return None
    if not isinstance(body.get("stream", False), bool):
        return None
    history = body.get("history") or []
    if not isinstance(history, list) or not all(isinstance(t, dict) for t in history):
        return None
    return TurnInput(body.get("input", ""), body.get("session_id") or None, history)


def event_frame(event: Event) -> bytes:
    if event.get("type") == "node.delta":
        return sse(event, "delta")
    return sse(event, str(event.get("type")), int(event.get("seq", 0)))


class App:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.mcp = McpEndpoint(runtime)
        # Turns whose answer is no longer awaited (their client went away) still end.
        self._tasks: set[asyncio.Task[Any]] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            return await self.lifespan(receive, send)
        if scope["type"] != "http":
            return None
        path, method = scope["path"], scope["method"]
        if tracing.enabled():  # this request's task only (runner.tracing)
            found = header(scope, b"traceparent")
            CALLER_TRACEPARENT.set(tracing.valid_traceparent(
                found[0].decode("latin-1")) if len(found) == 1 else None)
        try:
            if path == "/mcp":
                return await self.mcp(scope, receive, send)
            route = ROUTES.get(path)
            if route is None:
                raise HttpError(404, "not_found", "Not found.")
            if route[0] != method:
                raise HttpError(405, "method_not_allowed", f"Use {route[0]} {path}.",
                                [("Allow", route[0])])
            await route[1](self, scope, receive, send)
        except HttpError as error:
            await send_error(send, error)
        except Refused as refused:
            headers = [("Retry-After", str(refused.retry_after))] if refused.retry_after else []
            if refused.status == 401:
                headers.append(("WWW-Authenticate", AUTHENTICATE))
            await send_error(send, HttpError(refused.status, refused.code, refused.message,
                                             headers))

    async def lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # lifespan.startup
        async with self.mcp.manager.run():
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
            if self._tasks:
                await asyncio.wait(self._tasks, timeout=30)
        await self.runtime.aclose()
        await send({"type": "lifespan.shutdown.complete"})

    async def health(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send_json(send, 200, self.runtime.health())

    async def turns(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = caller_key(scope)
        body = await read_json(scope, receive)
        turn = check_turn(body)
        if turn is None:
            raise HttpError(400, "invalid_request", "Send {input, session_id?, history?, "
                                                    "stream?}.")
        accept = b",".join(header(scope, b"accept"))
        if body.get("stream") is True or b"text/event-stream" in accept:
            return await self._stream_turn(send, key, turn)
        await send_json(send, 200, await self.runtime.turn(key, turn))

    async def _stream_turn(self, send: Send, key: str, turn: TurnInput) -> None:
        opened = await self.runtime.open(key, turn)  # refusals before the stream starts
        turn_id = opened.turn_id
        events: asyncio.Queue[Event | None] = asyncio.Queue()
        task = self._spawn(self.runtime.run(opened, key, turn, emit=events.put_nowait))
        task.add_done_callback(lambda _: events.put_nowait(None))
        try:
            await start_stream(send)
            await send_chunk(send, sse({"turn_id": turn_id}, "turn"))
            while (event := await events.get()) is not None:
                await send_chunk(send, event_frame(event))
            await send_chunk(send, sse(await task, "answer"), last=True)
        except OSError:  # the client went away: the turn goes on and is reported
            log.info("the client of turn %s went away", turn_id)

    async def triggered(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A turn a trigger opened (contracts.agent_runtime.TRIGGERED_TURNS_PATH): no
        caller key — the gateway lets this runtime claim the turn once, with its
        credential; it runs in the background, its answer reported like any turn's."""
        body = await read_json(scope, receive)
        try:  # a UUID, never a path of the gateway's to post to with the credential
            turn_id = str(uuid.UUID(body["turn_id"] if isinstance(body, dict) else ""))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise HttpError(400, "invalid_request", "Send {turn_id: <UUID>}.") from None
        opened, turn = await self.runtime.claim(turn_id)
        self._spawn(self.runtime.run(opened, "", turn))
        await send_json(send, 202, {"turn_id": turn_id, "status": "running"})

    async def models(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.runtime.check_key(caller_key(scope))
        await send_json(send, 200, openai_api.models(self.runtime))

    async def chat(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = caller_key(scope)
        turn, stream, include_usage = openai_api.parse_chat(self.runtime,
                                                            await read_json(scope, receive))
        if not stream:
            answer = await self.runtime.turn(key, turn)
            if answer["status"] != "completed":
                raise openai_api.failed(answer)
            return await send_json(send, 200, openai_api.completion(self.runtime, answer))
        opened = await self.runtime.open(key, turn)
        turn_id = opened.turn_id
        task = self._spawn(self.runtime.run(opened, key, turn))
        try:
            await start_stream(send)
            role = openai_api.chunk(self.runtime, turn_id, {"role": "assistant", "content": ""})
            await send_chunk(send, sse(role))
            answer = await task
            if answer["status"] != "completed":
                error = openai_api.failed(answer)
                await send_chunk(send, sse({"error": {"message": error.message,
                                                      "type": "server_error",
                                                      "code": error.code}}), last=True)
                return
            for piece in openai_api.answer_chunks(self.runtime, answer, include_usage):
                await send_chunk(send, sse(piece))
            await send_chunk(send, sse("[DONE]"), last=True)
        except OSError:
            log.info("the client of turn %s went away", turn_id)

    def _spawn(self, work: Any) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


ROUTES = {
    "/healthz": ("GET", App.health),
    "/turns": ("POST", App.turns),
    "/v1/models": ("GET", App.models),
    "/v1/chat/completions": ("POST", App.chat),
    TRIGGERED_TURNS_PATH: ("POST", App.triggered),
}
