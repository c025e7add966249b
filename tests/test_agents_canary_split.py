"""The runtime's choice of version per turn during a canary (agents/canary.py): the stated
share of sessions goes to the canary, each session always to the same version, the same
in every process (SHA-256 of the session id, not Python's salted hash()); turns without a
session draw at random. The runtime refuses to start on a canary it cannot verify."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agents.canary import bucket_of, load_canary
from agents.native_graph import ArtifactError, build_native
from agents.runtime import Runtime
from agents.serve import EXIT_REFUSED, load_runtime
from contracts.hashing import content_sha256
from contracts.normalize import normalize
from runner.request import LLMConfig
from tests.stack import ROOT

SESSIONS = [f"session-{i}" for i in range(10_000)]
# The tolerance the split is held to over 10,000 sessions, in percentage points.
TOLERANCE_POINTS = 1.0


def graph(template: str) -> dict[str, Any]:
    nodes: list[dict[str, Any]] = [{"id": "input", "kind": "input"},
             {"id": "p", "kind": "prompt", "config": {"template": template}},
             {"id": "output", "kind": "output"}]
    edges = [{"from": a["id"], "to": b["id"]} for a, b in zip(nodes, nodes[1:], strict=False)]
    return normalize({"schema_version": 2, "nodes": nodes, "edges": edges}).graph


def artifact(version: int, template: str) -> dict[str, Any]:
    found = graph(template)
    return {"version": version, "version_id": f"v{version}", "graph": found,
            "content_sha256": content_sha256(found), "subflows": []}


def runtime(percent: int | None) -> Runtime:
    current = artifact(1, "one {input}")
    canary = None
    if percent is not None:
        canary = load_canary_from({"percent": percent, "artifact": artifact(2, "two {input}")})
    return Runtime(build_native(current), current, "http://127.0.0.1:9", "kag_x",
                   LLMConfig(backend="mock"), [], canary=canary)


def load_canary_from(document: dict[str, Any]) -> Any:
    path = Path(__file__).parent / ".canary-test.json"
    path.write_text(json.dumps(document))
    try:
        return load_canary(str(path))
    finally:
        path.unlink()


@pytest.mark.parametrize(("percent", "exact"), [(1, 96), (10, 1025), (50, 4973), (99, 9908)])
def test_the_stated_share_of_sessions_goes_to_the_canary(percent: int, exact: int) -> None:
    served = runtime(percent)
    to_canary = sum(served.choose(s).version_id == "v2" for s in SESSIONS)
    assert abs(to_canary / len(SESSIONS) * 100 - percent) <= TOLERANCE_POINTS
    # Exactly this many in every process and replica: the split is arithmetic on SHA-256.
    assert to_canary == exact
    assert to_canary == sum(bucket_of(s) < percent for s in SESSIONS)


def test_a_session_stays_on_its_version() -> None:
    served = runtime(30)
    first = {s: served.choose(s).version_id for s in SESSIONS[:500]}
    for _ in range(5):
        assert {s: served.choose(s).version_id for s in SESSIONS[:500]} == first
    assert set(first.values()) == {"v1", "v2"}
    # Another process (another pod) places every session the same way.
    script = ("import json, sys; from agents.canary import bucket_of; "
              "print(json.dumps([bucket_of(s) for s in json.load(sys.stdin)]))")
    other = subprocess.run([sys.executable, "-c", script], input=json.dumps(SESSIONS[:500]),
                           capture_output=True, text=True, cwd=ROOT, check=True)
    assert json.loads(other.stdout) == [bucket_of(s) for s in SESSIONS[:500]]


def test_turns_without_a_session_draw_at_random() -> None:
    random.seed(28)
    served = runtime(20)
    to_canary = sum(served.choose(None).version_id == "v2" for _ in range(10_000))
    assert abs(to_canary / 100 - 20) <= 2.0  # binomial: 20 % ± 5 standard deviations


def test_without_a_canary_every_turn_is_the_version() -> None:
    served = runtime(None)
    assert {served.choose(s).version_id for s in SESSIONS[:1000]} == {"v1"}
    assert served.health()["canary"] is None


def test_health_names_both_versions() -> None:
    health = runtime(15).health()
    assert health["version_id"] == "v1"
    assert health["canary"] == {"version": 2, "version_id": "v2", "percent": 15,
                                "content_sha256": artifact(2, "two {input}")["content_sha256"]}


@pytest.mark.parametrize("document", [
    {"percent": 0, "artifact": artifact(2, "two {input}")},
    {"percent": 100, "artifact": artifact(2, "two {input}")},
    {"percent": True, "artifact": artifact(2, "two {input}")},
    {"percent": 10, "artifact": {**artifact(2, "two {input}"), "graph": graph("changed")}},
    {"percent": 10},
])
def test_a_canary_that_does_not_verify_is_refused(document: dict[str, Any]) -> None:
    with pytest.raises(ArtifactError):
        load_canary_from(document)


def test_the_runtime_refuses_to_start_on_a_tampered_canary(tmp_path: Path) -> None:
    (tmp_path / "artifact.json").write_text(json.dumps(artifact(1, "one {input}")))
    tampered = {**artifact(2, "two {input}"), "graph": graph("changed after publishing")}
    (tmp_path / "canary.json").write_text(json.dumps({"percent": 10, "artifact": tampered}))
    env = {"KIONGA_AGENT_ARTIFACT": str(tmp_path / "artifact.json"),
           "KIONGA_AGENT_CANARY": str(tmp_path / "canary.json"),
           "KIONGA_AGENT_CREDENTIAL": "kag_x"}
    with pytest.raises(ArtifactError, match="canary"):
        load_runtime(env)
    started = subprocess.run([sys.executable, "-m", "agents.serve"], cwd=ROOT,
                             env={"PATH": "/usr/bin:/bin", **env}, capture_output=True,
                             text=True, timeout=60)
    assert started.returncode == EXIT_REFUSED
    assert "refusing to start: the canary" in started.stderr
