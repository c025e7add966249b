"""One deployed agent's turns: a verified artifact, the gateway it reports to, and the
HTTP connections every turn shares.

A turn is opened on the gateway's internal listener (POST agent-turns) with the agent
credential and the caller's API key (contracts.agent_runtime.KEY_HEADER), which the
gateway verifies and counts: the runtime never decides a key is good by itself, so a
revoked key is refused at the next request. The turn runs with the runner's engine,
calling resources and approvals there with X-Kionga-Turn, and is reported (POST
agent-turns/{id}/report). Requests that open no turn (the models list, MCP's handshake)
have the key checked with POST agent-keys/check.

Connections, shared by every turn on the event loop (a client per turn would build an
SSL context and a pool per turn): the gateway's open and report, the platform model and
the graph's resource calls (runner.http_resources) go through one aiohttp session
(agents/client.py).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Final

import aiohttp

from agents.canary import Canary, Served, serves_canary
from agents.client import UNREACHABLE, AiohttpChat, Answer, SharedSession
from agents.native_graph import NativeGraph
from contracts.agent_runtime import INVALID_API_KEY, KEY_HEADER, THROTTLED, TURN_HEADER
from runner import tracing
from runner.backends import ModelBackend
from runner.backends.openai import OpenAIBackend
from runner.events import EmitFn
from runner.http_resources import HttpResources
from runner.request import LLMConfig, RunResult

log = logging.getLogger("kionga.agent")
GATEWAY_TIMEOUT: Final = 30.0
TRACE_SERVICE: Final = "kionga-agent"
# The W3C traceparent of the request a turn answers (set by agents.app while tracing is
# on): the turn's span is its child.
CALLER_TRACEPARENT: ContextVar[str | None] = ContextVar("caller_traceparent", default=None)


class Refused(Exception):
    """The answer to a request the runtime does not serve: its HTTP status, code, message
    and, for 429, the seconds to wait."""

    def __init__(self, status: int, code: str, message: str,
                 retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.retry_after = (status, code, message,
                                                                  retry_after)


@dataclass(frozen=True)
class OpenTurn:
    """A turn the gateway opened, and the version chosen to serve it."""

    turn_id: str
    served: Served


@dataclass(frozen=True)
class TurnInput:
    input: str
    session_id: str | None = None
    history: list[dict[str, Any]] = field(default_factory=list)


class Gateway:
    """JSON POSTs to the internal listener with the agent credential (and the caller's
    key when there is one), on the shared session."""

    def __init__(self, base_url: str, credential: str, shared: SharedSession) -> None:
        self.base_url = base_url.rstrip("/") + "/"
        self._shared = shared
        self._headers = {"Authorization": f"Bearer {credential}",
                         "Content-Type": "application/json", "Accept": "application/json"}
        self._timeout = aiohttp.ClientTimeout(total=None, connect=GATEWAY_TIMEOUT,
                                              sock_read=GATEWAY_TIMEOUT)

    async def post(self, path: str, body: dict[str, Any], key: str | None = None) -> Answer:
        """The answer; UNREACHABLE's errors when there is none."""
        headers = {**self._headers, KEY_HEADER: key} if key else self._headers
        return await self._shared.post(self.base_url + path,
                                       json.dumps(body, ensure_ascii=False).encode("utf-8"),
                                       headers, self._timeout)


class Runtime:
    """One verified artifact (two during a canary: agents/canary.py) and the gateway it
    reports to."""

    def __init__(self, native: NativeGraph, artifact: Mapping[str, Any], gateway_url: str,
                 credential: str, llm: LLMConfig, secret_patterns: list[str],
                 name: str = "agent", canary: Canary | None = None) -> None:
        self.native, self.gateway_url, self.credential = native, gateway_url.rstrip("/"), credential
        self.current = Served.of(native, artifact)
        self.version_id = self.current.version_id
        self.canary = canary
        self.llm, self.secret_patterns, self.name = llm, secret_patterns, name
        self.started = int(time.time())
        # The gateway's, the model's and the graph's resource calls (aiohttp).
        self.session = SharedSession()
        self.gateway = Gateway(self.gateway_url, credential, self.session)
        self.backend: ModelBackend | None = (
            OpenAIBackend(llm, http=AiohttpChat(self.session)) if llm.backend == "openai"
            else None)

    async def aclose(self) -> None:
        await self.session.aclose()

    def health(self) -> dict[str, Any]:
        canary = self.canary
        return {"status": "ok", **self.current.health(),
                "canary": ({**canary.served.health(), "percent": canary.percent}
                           if canary is not None else None)}

    def choose(self, session_id: str | None) -> Served:
        """The version serving a turn: the canary's share of sessions, the rest current."""
        canary = self.canary
        if canary is not None and serves_canary(canary.percent, session_id):
            return canary.served
        return self.current

    async def check_key(self, key: str) -> None:
        """The caller's key verified and counted by the gateway, or Refused."""
        await self._post("agent-keys/check", key, {}, 200)

    async def open(self, key: str, turn: TurnInput, *, key_counted: bool = False) -> OpenTurn:
        """A new turn (the key verified, and counted unless it was already) and the version
        serving it, which the gateway records on the turn; or Refused."""
        served = self.choose(turn.session_id)
        answer = await self._post("agent-turns", key, {
            "version_id": served.version_id, "input": turn.input,
            "session_id": turn.session_id or "", "key_counted": key_counted}, 201)
        return OpenTurn(str(answer["turn_id"]), served)

    async def claim(self, turn_id: str) -> tuple[OpenTurn, TurnInput]:
        """A turn a trigger opened (agents.app's /triggered-turns), claimed once for the
        version chosen to serve it (a trigger's turn has no session: a canary takes its
        share by the random draw); Refused 404/409 as the gateway says (not this agent's,
        claimed), 503 when it cannot be reached."""
        served = self.choose(None)
        try:
            answer = await self.gateway.post(f"agent-turns/{turn_id}/claim",
                                             {"version_id": served.version_id})
        except UNREACHABLE as exc:
            log.warning("the gateway cannot be reached: %s", type(exc).__name__)
            raise Refused(503, "gateway_unreachable", "The gateway cannot be reached.") from None
        if answer.status == 200:
            claimed = answer.json()
            return OpenTurn(turn_id, served), TurnInput(str(claimed.get("input", "")),
                                                        claimed.get("session_id") or None)
        if answer.status in (404, 409):
            code = "not_found" if answer.status == 404 else "turn_claimed"
            raise Refused(answer.status, code, "The turn is not this agent's to run, "
                                                      "or was claimed already.")
        raise _refusal(answer)

    async def run(self, opened: OpenTurn, key: str, turn: TurnInput,
                  emit: EmitFn | None = None) -> dict[str, Any]:
        """Run an opened turn with the engine and report it; the turn's answer."""
        turn_id, native = opened.turn_id, opened.served.native
        started = time.monotonic()
        # The turn's span (runner.tracing; None when tracing is off), child of the caller's
        # traceparent; its nodes' spans come from their records.
        trace = tracing.run_trace(TRACE_SERVICE, turn_id, CALLER_TRACEPARENT.get(),
                                  native.graph, "kionga.turn", "kionga.turn.id")
        headers = {TURN_HEADER: turn_id}
        if trace is not None and trace.traceparent:
            headers["traceparent"] = trace.traceparent
        resources = HttpResources(self.gateway_url, self.credential, headers=headers,
                                  session=self.session)
        result: RunResult | None = None
        try:
            result = await native.run(
                turn.input, resources=resources, llm=self.llm, emit=emit, backend=self.backend,
                session_id=turn.session_id, history=turn.history,
                secrets=[self.credential, key], secret_patterns=self.secret_patterns,
                record=trace.node if trace else None)
        finally:
            await resources.aclose()
            if trace is not None:
                trace.end(result.status if result else "failed",
                          result.reason if result else "internal_error",
                          int(result.usage.get("tokens", 0)) if result else 0)
        latency_ms = round((time.monotonic() - started) * 1000)
        report = _report(result, latency_ms)
        try:
            reported = await self.gateway.post(f"agent-turns/{turn_id}/report", report)
            if reported.status != 200:  # e.g. 409 turn_lost: reported past its deadline
                log.warning("the gateway refused the report of turn %s: %s %s", turn_id,
                            reported.status, reported.body[:300])
        except UNREACHABLE as exc:
            log.warning("the report of turn %s was not delivered: %s", turn_id,
                        type(exc).__name__)
        return {"turn_id": turn_id, "status": result.status, "output": result.output,
                "error": result.error, "usage": {"tokens": report["tokens"]},
                "latency_ms": latency_ms, "version_id": opened.served.version_id}

    async def turn(self, key: str, turn: TurnInput, *, key_counted: bool = False,
                   emit: EmitFn | None = None) -> dict[str, Any]:
        return await self.run(await self.open(key, turn, key_counted=key_counted), key, turn,
                              emit)

    async def _post(self, path: str, key: str, body: dict[str, Any],
                    expected: int) -> dict[str, Any]:
        try:
            answer = await self.gateway.post(path, body, key)
        except UNREACHABLE as exc:
            log.warning("the gateway cannot be reached: %s", type(exc).__name__)
            raise Refused(503, "gateway_unreachable",
                          "The gateway cannot be reached.") from None
        if answer.status == expected:
            return dict(answer.json())
        raise _refusal(answer)


def _refusal(answer: Answer) -> Refused:
    """What the caller is told of the gateway's refusal: their key's (401, 429) as is;
    anything else is the runtime's trouble (503), logged, not shown."""
    try:
        error = answer.json().get("error") or {}
    except (ValueError, AttributeError):
        error = {}
    code = error.get("code") if isinstance(error, dict) else None
    if answer.status == 401 and code == INVALID_API_KEY:
        return Refused(401, INVALID_API_KEY, str(error.get("message", "Invalid API key.")))
    if answer.status == 429 and code == THROTTLED:
        wait = answer.headers.get("Retry-After", "1")
        return Refused(429, THROTTLED, str(error.get("message", "Too many requests.")),
                       retry_after=int(wait) if wait.isdigit() else 1)
    log.warning("the gateway refused the request: %s %s", answer.status, answer.body[:300])
    return Refused(503, "gateway_refused", "The gateway did not open the turn.")


def _report(result: RunResult, latency_ms: int) -> dict[str, Any]:
    error = None
    if result.error is not None:
        error = {"code": str(result.error.get("code") or result.reason or "failed")[:64],
                 "message": str(result.error.get("message", ""))[:2000]}
    elif result.status == "failed":
        error = {"code": str(result.reason or "failed")[:64], "message": "The turn failed."}
    output = result.output if result.status == "completed" else None
    return {"status": result.status, "latency_ms": latency_ms,
            "tokens": int(result.usage.get("tokens", 0)), "output": output, "error": error}
