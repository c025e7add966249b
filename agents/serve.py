"""The agent runtime's HTTP entry point: `python -m agents.serve` (the image's command).

At startup it loads the artifact (KIONGA_AGENT_ARTIFACT, a JSON file: the ConfigMap
the deploy mounts) and verifies every hash with build_native; on a mismatch it logs
one line `refusing to start: ...` and exits with status 2. Then it serves:

    GET  /healthz   {"status": "ok", "version", "version_id", "content_sha256"}
    POST /turns     {"input", "session_id"?, "history"?} -> {"turn_id", "status",
                    "output", "error", "usage": {"tokens"}, "latency_ms"}

Each turn is opened on the gateway's internal listener (POST agent-turns) with the
agent credential (KIONGA_AGENT_CREDENTIAL: the agent's project identity, revocable,
never a person's), runs with the runner's engine calling resources and approvals
there with `X-Kionga-Turn`, and is reported (POST agent-turns/{id}/report: status,
latency, tokens, error). A gateway that cannot open the turn answers 503.

Other settings: KIONGA_AGENT_GATEWAY_URL (the internal listener's /api/v1),
KIONGA_AGENT_HOST (127.0.0.1), KIONGA_AGENT_PORT (8080), MLAIOPS_LLM_BACKEND / _MODEL /
_BASE_URL (the platform model, as on the runner), KIONGA_SECRET_PATTERNS.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from collections.abc import Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final

import httpx

from agents.native_graph import ArtifactError, NativeGraph, build_native
from runner.env import Env, EnvError
from runner.http_resources import HttpResources
from runner.request import LLMConfig, RunResult

log = logging.getLogger("kionga.agent")
TURN_HEADER: Final = "X-Kionga-Turn"
MAX_BODY: Final = 1_000_000
EXIT_REFUSED: Final = 2


class Runtime:
    """One verified artifact and the gateway it reports to."""

    def __init__(self, native: NativeGraph, artifact: Mapping[str, Any], gateway_url: str,
                 credential: str, llm: LLMConfig, secret_patterns: list[str]) -> None:
        self.native, self.gateway_url, self.credential = native, gateway_url.rstrip("/"), credential
        self.version_id = str(artifact.get("version_id", ""))
        self.llm, self.secret_patterns = llm, secret_patterns

    def health(self) -> dict[str, Any]:
        return {"status": "ok", "version": self.native.version, "version_id": self.version_id,
                "content_sha256": self.native.content_sha256}

    async def turn(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        started = time.monotonic()
        headers = {"Authorization": f"Bearer {self.credential}"}
        async with httpx.AsyncClient(base_url=self.gateway_url + "/", headers=headers,
                                     timeout=30.0) as gateway:
            opened = await gateway.post("agent-turns", json={
                "version_id": self.version_id, "input": body["input"],
                "session_id": body.get("session_id") or ""})
            if opened.status_code != 201:
                log.warning("the gateway refused the turn: %s %s", opened.status_code,
                            opened.text[:300])
                return 503, {"error": {"code": "gateway_refused",
                                       "message": "The gateway did not open the turn."}}
            turn_id = opened.json()["turn_id"]
            resources = HttpResources(self.gateway_url, self.credential,
                                      headers={TURN_HEADER: turn_id})
            try:
                result = await self.native.run(
                    body["input"], resources=resources, llm=self.llm,
                    session_id=body.get("session_id"), history=body.get("history") or [],
                    secrets=[self.credential], secret_patterns=self.secret_patterns)
            finally:
                await resources.aclose()
            latency_ms = round((time.monotonic() - started) * 1000)
            report = _report(result, latency_ms)
            reported = await gateway.post(f"agent-turns/{turn_id}/report", json=report)
            if reported.status_code != 200:  # e.g. 409 turn_lost: reported past its deadline
                log.warning("the gateway refused the report of turn %s: %s %s", turn_id,
                            reported.status_code, reported.text[:300])
        return 200, {"turn_id": turn_id, "status": result.status, "output": result.output,
                     "error": result.error, "usage": {"tokens": report["tokens"]},
                     "latency_ms": latency_ms}


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


def check_turn(body: Any) -> dict[str, Any] | None:
    """The turn body, or None when it is not {input: str, session_id?: str, history?: []}."""
    if not isinstance(body, dict) or not isinstance(body.get("input", ""), str):
        return None
    if not isinstance(body.get("session_id") or "", str):
        return None
    history = body.get("history") or []
    if not isinstance(history, list) or not all(isinstance(t, dict) for t in history):
        return None
    return {"input": body.get("input", ""), "session_id": body.get("session_id"),
            "history": history}


def make_handler(runtime: Runtime) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "kionga-agent"

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path != "/healthz":
                return self._send(404, {"error": {"code": "not_found", "message": "Not found."}})
            self._send(200, runtime.health())

        def do_POST(self) -> None:  # noqa: N802
            if self.path != "/turns":
                return self._send(404, {"error": {"code": "not_found", "message": "Not found."}})
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                return self._send(413, {"error": {"code": "payload_too_large",
                                                  "message": "The body is too large."}})
            try:
                body = check_turn(json.loads(self.rfile.read(length) or b"{}"))
            except ValueError:
                body = None
            if body is None:
                return self._send(400, {"error": {"code": "invalid_request", "message":
                                                  "Send {input, session_id?, history?}."}})
            try:
                status, answer = asyncio.run(runtime.turn(body))
            except httpx.HTTPError as exc:
                log.warning("the gateway cannot be reached: %s", exc)
                status, answer = 503, {"error": {"code": "gateway_unreachable",
                                                 "message": "The gateway cannot be reached."}}
            self._send(status, answer)

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            self.send_response(HTTPStatus(status))
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            log.debug(format, *args)

    return Handler


def load_runtime(environ: Mapping[str, str] | None = None) -> tuple[Runtime, str, int]:
    """The verified runtime and where to listen; ArtifactError or EnvError otherwise."""
    env = Env(environ)
    path = env.text("KIONGA_AGENT_ARTIFACT").strip()
    if not path:
        raise EnvError("KIONGA_AGENT_ARTIFACT must name the artifact's JSON file")
    try:
        artifact = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ArtifactError(f"the artifact {path} cannot be read: {exc}") from None
    native = build_native(artifact)
    credential = env.text("KIONGA_AGENT_CREDENTIAL").strip()
    if not credential:
        raise EnvError("KIONGA_AGENT_CREDENTIAL must be set (the agent's credential)")
    llm = LLMConfig(backend=env.text("MLAIOPS_LLM_BACKEND", "mock").strip() or "mock",
                    model=env.text("MLAIOPS_LLM_MODEL").strip(),
                    base_url=env.text("MLAIOPS_LLM_BASE_URL").strip())
    runtime = Runtime(native, artifact, env.text("KIONGA_AGENT_GATEWAY_URL",
                                                 "http://127.0.0.1:8087/api/v1"),
                      credential, llm, env.strings("KIONGA_SECRET_PATTERNS", []))
    return (runtime, env.text("KIONGA_AGENT_HOST").strip() or "127.0.0.1",
            env.integer("KIONGA_AGENT_PORT", 8080, within=(0, 65535)))


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    try:
        runtime, host, port = load_runtime()
    except (ArtifactError, EnvError) as exc:
        log.error("refusing to start: %s", exc)
        return EXIT_REFUSED
    server = ThreadingHTTPServer((host, port), make_handler(runtime))
    # The bound port on one line (port 0 picks a free one): tests and scripts read it.
    log.info("serving version %s (%s) on http://%s:%d", runtime.native.version,
             runtime.native.content_sha256, host, server.server_address[1])
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
