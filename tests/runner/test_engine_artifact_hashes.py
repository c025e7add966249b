"""A subflow's graph must hash to its published content_sha256, checked before any node runs."""

from __future__ import annotations

import copy

from engine_kit import chain, graph, run
from hypothesis import given
from hypothesis import strategies as st

from contracts.hashing import content_sha256
from runner.artifacts import graph_hash, mismatched_versions
from runner.settings import load_settings
from runner.task_payload import parse_task
from runner.task_seal import seal

SHOUT = chain(("p", "prompt", {"template": "{input}!"}))
TOP = graph([("input", "input"), ("f", "subflow", {"subflow": "v-shout"}), ("output", "output")],
            ["input>f", "f>output"])


def test_it_runs_verified_subflows() -> None:
    done = run(TOP, "hey", subflows={"v-shout": SHOUT},
               subflow_hashes={"v-shout": content_sha256(SHOUT)})
    assert done.result.status == "completed" and done.result.output == "hey!"


def test_it_refuses_a_tampered_subflow_before_any_node_runs() -> None:
    tampered = copy.deepcopy(SHOUT)
    tampered["nodes"][1]["config"]["template"] = "{input}?"  # the hash kept: SHOUT's
    done = run(TOP, "hey", subflows={"v-shout": tampered},
               subflow_hashes={"v-shout": content_sha256(SHOUT)})
    assert done.types() == ["run.started", "run.failed"]
    assert done.terminal["reason"] == "invalid_artifact"
    assert "v-shout" in done.terminal["error"]["message"]
    assert "content_sha256" in done.terminal["error"]["message"]


def test_it_refuses_a_subflow_without_a_hash() -> None:
    done = run(TOP, "hey", subflows={"v-shout": SHOUT}, subflow_hashes={})
    assert done.terminal["reason"] == "invalid_artifact"


def test_it_refuses_what_is_no_graph() -> None:
    assert graph_hash({"nodes": "x"}) is None
    assert mismatched_versions({"v": {"nodes": "x"}}, {"v": "0" * 64}) == ["v"]


@given(st.text(min_size=1, max_size=40))
def test_it_notices_any_changed_template(template: str) -> None:
    changed = copy.deepcopy(SHOUT)
    changed["nodes"][1]["config"]["template"] = template
    expected = [] if template == "{input}!" else ["v"]
    assert mismatched_versions({"v": changed}, {"v": content_sha256(SHOUT)}) == expected


def test_it_reads_the_hashes_the_task_carries() -> None:
    token = "runner-token-0123456789"
    payload = {"run_id": "r1", "graph": TOP, "subflows": {"v-shout": SHOUT},
               "subflow_hashes": {"v-shout": content_sha256(SHOUT)},
               "sealed": seal({"credential": "krc_x", "event_key": "00", "lease": "l" * 32},
                              token, "r1"),
               "callback_url": "http://gw"}
    settings = load_settings({"KIONGA_DESIGNER_RUNNER_TOKEN": token})
    assert parse_task(payload, settings).request.subflow_hashes == payload["subflow_hashes"]
    # Without hashes every subflow is refused: nothing slips past the check.
    del payload["subflow_hashes"]
    assert parse_task(payload, settings).request.subflow_hashes == {}
