"""The agent runtime's entry point: `python -m agents.serve` (the image's command).

At startup it loads the artifact (KIONGA_AGENT_ARTIFACT, a JSON file: the ConfigMap
the deploy mounts) and verifies every hash with build_native; on a mismatch it logs
one line `refusing to start: ...` and exits with status 2. Then it serves the ASGI app
(agents/app.py: /healthz, /turns, the OpenAI-compatible /v1 routes and MCP at /mcp)
on uvicorn, every turn a task of one event loop (the runner's engine, as on the runner).

Settings: KIONGA_AGENT_CREDENTIAL (the agent's project identity on the gateway's
internal listener), KIONGA_AGENT_GATEWAY_URL (that listener's /api/v1),
KIONGA_AGENT_NAME (the agent's name: its OpenAI model and MCP tool; default "agent"),
KIONGA_AGENT_CANARY (during a canary: the JSON file {percent, artifact} of the canary
version, verified like the artifact; agents/canary.py),
KIONGA_AGENT_HOST (127.0.0.1), KIONGA_AGENT_PORT (8080; 0 picks a free one, logged),
MLAIOPS_LLM_BACKEND / _MODEL / _BASE_URL / _API_KEY (the platform model, as on the
runner), KIONGA_SECRET_PATTERNS.

The HTTP parser is httptools with a bound on a request's head, 16 KiB within 10 s
(agents.http.BoundedHttpProtocol): callers reach this process from outside the platform.
"""

from __future__ import annotations

import json
import logging
import socket
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import uvicorn

from agents.app import App
from agents.canary import load_canary
from agents.http import BoundedHttpProtocol
from agents.native_graph import ArtifactError, build_native
from agents.runtime import Runtime
from runner import heap
from runner.env import Env, EnvError
from runner.request import LLMConfig

log = logging.getLogger("kionga.agent")
EXIT_REFUSED: Final = 2
# Seconds a stopping runtime gives its turns in flight (the pod's grace period is 30).
GRACEFUL_SECONDS: Final = 25


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
    canary_path = env.text("KIONGA_AGENT_CANARY").strip()
    canary = load_canary(canary_path) if canary_path else None
    credential = env.text("KIONGA_AGENT_CREDENTIAL").strip()
    if not credential:
        raise EnvError("KIONGA_AGENT_CREDENTIAL must be set (the agent's credential)")
    llm = LLMConfig(backend=env.text("MLAIOPS_LLM_BACKEND", "mock").strip() or "mock",
                    model=env.text("MLAIOPS_LLM_MODEL").strip(),
                    base_url=env.text("MLAIOPS_LLM_BASE_URL").strip(),
                    api_key=env.text("MLAIOPS_LLM_API_KEY").strip())
    runtime = Runtime(native, artifact, env.text("KIONGA_AGENT_GATEWAY_URL",
                                                 "http://127.0.0.1:8087/api/v1"),
                      credential, llm, env.strings("KIONGA_SECRET_PATTERNS", []),
                      name=env.text("KIONGA_AGENT_NAME").strip() or "agent", canary=canary)
    return (runtime, env.text("KIONGA_AGENT_HOST").strip() or "127.0.0.1",
            env.integer("KIONGA_AGENT_PORT", 8080, within=(0, 65535)))


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    try:
        runtime, host, port = load_runtime()
    except (ArtifactError, EnvError) as exc:
        log.error("refusing to start: %s", exc)
        return EXIT_REFUSED
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    config = uvicorn.Config(App(runtime), http=BoundedHttpProtocol, lifespan="on",
                            log_level="warning", proxy_headers=False, server_header=False,
                            backlog=4096, timeout_graceful_shutdown=GRACEFUL_SECONDS)
    # What start-up made lives as long as the process: out of the collector's sight, a
    # full collection under hundreds of turns does not walk the imported libraries.
    heap.freeze()
    # The bound port on one line (port 0 picks a free one): tests and scripts read it.
    if runtime.canary is not None:
        log.info("canary: version %s (%s) serves %d %% of the turns",
                 runtime.canary.served.native.version,
                 runtime.canary.served.native.content_sha256, runtime.canary.percent)
    log.info("serving version %s (%s) on http://%s:%d", runtime.native.version,
             runtime.native.content_sha256, host, sock.getsockname()[1])
    uvicorn.Server(config).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
