"""`python -m agents.local <dir>` runs each locally deployed agent as `python -m
agents.serve` on its port: a new artifact restarts it with the new version, a tampered
one is refused (exit 2) and not started again until the next artifact; stopping the
runner stops its agents."""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from agents.local import POLL_SECONDS
from agents.native_graph import RUNTIME_MODULE
from contracts.hashing import content_sha256
from contracts.normalize import normalize
from tests.agent_local_helpers import until
from tests.stack import ROOT, free_port

# The runner's pause before it starts an ended agent again (KIONGA_LOCAL_RESTART_SECONDS),
# shorter here than the product's default.
RESTART_SECONDS = 1.0


def artifact(template: str, version: int) -> dict[str, Any]:
    graph = normalize({"schema_version": 2, "nodes": [
        {"id": "input", "kind": "input"},
        {"id": "p", "kind": "prompt", "config": {"template": template}},
        {"id": "output", "kind": "output"}],
        "edges": [{"from": "input", "to": "p"}, {"from": "p", "to": "output"}]}).graph
    return {"version": version, "version_id": f"v{version}", "graph": graph, "subflows": [],
            "content_sha256": content_sha256(graph), "runtime_module": RUNTIME_MODULE}


def health(port: int) -> dict[str, Any] | None:
    try:
        return dict(httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).json())
    except httpx.HTTPError:
        return None


def test_it_runs_restarts_and_stops_local_agents(tmp_path: Path) -> None:
    folder, port = tmp_path / "agent-0123456789ab", free_port()
    folder.mkdir()
    (folder / "artifact.json").write_text(json.dumps(artifact("<{input}>", 1)))
    (folder / "credential").write_text("kag_local")
    (folder / "port").write_text(str(port))
    env = {**os.environ, "KIONGA_LOCAL_RESTART_SECONDS": str(RESTART_SECONDS)}
    runner = subprocess.Popen([sys.executable, "-m", "agents.local", str(tmp_path)], cwd=ROOT,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert until(lambda: health(port))["version_id"] == "v1"
        (folder / "artifact.json").write_text(json.dumps(artifact("[{input}]", 2)))
        until(lambda: (health(port) or {}).get("version_id") == "v2")

        tampered = copy.deepcopy(artifact("{input}!", 3))
        tampered["graph"]["nodes"][1]["config"]["template"] = "pwned {input}"
        (folder / "artifact.json").write_text(json.dumps(tampered))
        until(lambda: b"refusing to start" in (folder / "runtime.log").read_bytes())
        # Past the restart pause and a look more: a refused artifact is not tried again.
        time.sleep(RESTART_SECONDS + 2 * POLL_SECONDS)
        assert health(port) is None
        assert (folder / "runtime.log").read_bytes().count(b"refusing to start") == 1

        (folder / "artifact.json").write_text(json.dumps(artifact("({input})", 4)))
        until(lambda: (health(port) or {}).get("version_id") == "v4")
    finally:
        runner.send_signal(signal.SIGTERM)
        assert runner.wait(timeout=40) == 0
    assert health(port) is None
