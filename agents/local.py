"""`python -m agents.local <dir>`: the local runtime's runner of agents (bin/demo).

Every folder of <dir> written by a deploy (deployments/local.py: `artifact.json`,
`credential`, `port`, and `canary.json` during a canary) gets one `python -m agents.serve`
on 127.0.0.1:<port>, the same runtime a pod runs, with the same hash checks at start-up.
A new artifact (a rollout: the deploy writes it last, after the canary file) stops the
agent's process and starts it again; a process that ends is started again after
RESTART_SECONDS (KIONGA_LOCAL_RESTART_SECONDS), except one that refused its artifact
(exit 2), which waits for the next artifact. Each agent's output goes to
`<dir>/<name>/runtime.log`. The gateway's internal listener is KIONGA_AGENT_GATEWAY_URL,
the platform model MLAIOPS_LLM_*, as for a pod; its trace exporter's OTEL_* variables are
the gateway's at the deploy (`otel.json`), not this process's. SIGTERM or SIGINT stops
every agent, then this process.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Final

from agents.serve import EXIT_REFUSED
from contracts.agent_runtime import (
    LOCAL_ARTIFACT,
    LOCAL_CANARY,
    LOCAL_CREDENTIAL,
    LOCAL_OTEL,
    LOCAL_PORT,
    OTEL_NOT_PASSED,
    OTEL_PREFIX,
)
from runner.env import Env

log = logging.getLogger("kionga.agents.local")
POLL_SECONDS: Final = 0.5
# A process that ended is started again after this pause (KIONGA_LOCAL_RESTART_SECONDS;
# the tests shorten it to see a refused one stay down without waiting the whole pause).
RESTART_SECONDS: Final = Env().seconds("KIONGA_LOCAL_RESTART_SECONDS", 5.0)
STOP_SECONDS: Final = 30.0


@dataclass
class Agent:
    process: subprocess.Popen[bytes]
    stamp: tuple[int, int]  # the artifact file's (mtime_ns, size) it was started with
    ended_at: float | None = None


def stamp_of(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_mtime_ns, stat.st_size


def otel_env(folder: Path) -> dict[str, str]:
    """The deploy's OTEL_* variables (otel.json; none: no traces), never other names."""
    try:
        found = json.loads((folder / LOCAL_OTEL).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {name: value for name, value in found.items() if isinstance(value, str)
            and name.startswith(OTEL_PREFIX) and name not in OTEL_NOT_PASSED}


def start(folder: Path, stamp: tuple[int, int]) -> Agent:
    inherited = {name: value for name, value in os.environ.items()
                 if not name.startswith(OTEL_PREFIX)}
    env = {**inherited, **otel_env(folder),
           "KIONGA_AGENT_ARTIFACT": str(folder / LOCAL_ARTIFACT),
           "KIONGA_AGENT_CREDENTIAL": (folder / LOCAL_CREDENTIAL).read_text().strip(),
           "KIONGA_AGENT_NAME": folder.name, "KIONGA_AGENT_HOST": "127.0.0.1",
           "KIONGA_AGENT_PORT": (folder / LOCAL_PORT).read_text().strip()}
    if (folder / LOCAL_CANARY).is_file():  # written before the artifact (a rollout's last)
        env["KIONGA_AGENT_CANARY"] = str(folder / LOCAL_CANARY)
    with open(folder / "runtime.log", "ab") as output:
        process = subprocess.Popen([sys.executable, "-m", "agents.serve"], env=env,
                                   stdout=output, stderr=subprocess.STDOUT)
    log.info("agent %s: started on http://127.0.0.1:%s (pid %d)", folder.name,
             env["KIONGA_AGENT_PORT"], process.pid)
    return Agent(process, stamp)


def stop(agent: Agent) -> None:
    if agent.process.poll() is None:
        agent.process.terminate()
        try:
            agent.process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            agent.process.kill()
            agent.process.wait()


def tend(root: Path, agents: dict[str, Agent], now: float) -> None:
    """One look at <root>: start, restart or leave each agent."""
    for folder in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        artifact = folder / LOCAL_ARTIFACT
        if not all((folder / f).is_file() for f in (LOCAL_ARTIFACT, LOCAL_CREDENTIAL,
                                                    LOCAL_PORT)):
            continue
        stamp = stamp_of(artifact)
        agent = agents.get(folder.name)
        if agent is not None and agent.stamp != stamp:
            log.info("agent %s: a new artifact, restarting", folder.name)
            stop(agent)
            agent = None
        elif agent is not None and agent.process.poll() is not None:
            agent.ended_at = agent.ended_at or now
            refused = agent.process.returncode == EXIT_REFUSED
            if refused or now - agent.ended_at < RESTART_SECONDS:
                continue  # refused: until the next artifact; else after a pause
            agent = None
        if agent is None:
            agents[folder.name] = start(folder, stamp)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0] if args else os.environ.get("KIONGA_LOCAL_AGENTS_DIR", "var/agents"))
    agents: dict[str, Agent] = {}
    stopping = False

    def on_signal(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    log.info("running the agents deployed to %s", root.resolve())
    try:
        while not stopping:
            tend(root, agents, time.monotonic())
            time.sleep(POLL_SECONDS)
    finally:
        for agent in agents.values():
            stop(agent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
