"""runner.worker.execute in this process: the paths a real engine does not take on demand."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import redis

from runner import protocol, task_signature, worker
from runner.protocol import now_iso
from runner.settings import RunnerSettings
from tests.listener_peer import kept_alive_peer
from tests.runner_process.runner_kit import (
    TOKEN,
    credential_of,
    knowledge_graph,
    mock_graph,
    payload,
    slot_for,
    slow_gateway,
    stream_events,
    wait_for,
)


def run(body: dict[str, Any], runner_settings: RunnerSettings, sink_redis: redis.Redis) -> str:
    assert slot_for(sink_redis, body)
    return worker.execute(body, task_signature.sign(body, TOKEN), settings=runner_settings,
                          client=sink_redis)


def crashing_engine(*, terminal: bool) -> Any:
    async def fake(request: Any, *, emit: Any, **_: Any) -> Any:
        emit({"seq": 0, "type": "run.started", "at": now_iso()})
        emit({"seq": 1, "type": "node.started", "at": now_iso(), "node_id": "input",
              "kind": "input", "attempt": 1})
        if terminal:
            emit({"seq": 2, "type": "run.completed", "at": now_iso(), "output": "x",
                  "usage": {"tokens": 0}})
        raise RuntimeError("engine bug")

    return fake


@pytest.mark.allow_output  # the crash is logged with its traceback
def test_it_ends_a_crashed_run_with_one_internal_error(
        runner_settings: RunnerSettings, sink_redis: redis.Redis,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "run_graph", crashing_engine(terminal=False))
    body = payload(mock_graph())
    assert run(body, runner_settings, sink_redis) == "internal_error"
    events = stream_events(sink_redis, body["run_id"])
    assert [(e["seq"], e["type"]) for e in events] == [
        (0, "run.started"), (1, "node.started"), (2, "run.failed")]
    assert events[-1]["reason"] == "internal_error"
    assert events[-1]["error"]["code"] == "node_error"
    assert not protocol.slot_alive(sink_redis, body["run_id"])


@pytest.mark.allow_output  # the crash is logged with its traceback
def test_it_adds_no_terminal_event_when_the_engine_sent_one(
        runner_settings: RunnerSettings, sink_redis: redis.Redis,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "run_graph", crashing_engine(terminal=True))
    body = payload(mock_graph())
    assert run(body, runner_settings, sink_redis) == "internal_error"
    assert [e["type"] for e in stream_events(sink_redis, body["run_id"])] == [
        "run.started", "node.started", "run.completed"]


@pytest.mark.allow_output  # the lost lease is logged
def test_it_stops_a_run_whose_lease_ran_out(runner_settings: RunnerSettings,
                                            sink_redis: redis.Redis) -> None:
    body = payload(knowledge_graph())
    outcome: list[str] = []
    with slow_gateway(delay=30) as (url, seen):
        body["callback_url"] = url
        thread = threading.Thread(
            target=lambda: outcome.append(run(body, runner_settings, sink_redis)))
        thread.start()
        assert wait_for(lambda: bool(seen), 5)
        protocol.release_slot(sink_redis, body["run_id"])  # as if the gateway reaped it
        thread.join(protocol.HEARTBEAT_SECONDS + 3)
    assert outcome == ["cancelled"]
    assert stream_events(sink_redis, body["run_id"])[-1]["type"] == "run.cancelled"


@pytest.mark.allow_output  # the dropped tasks are logged (without their payload)
def test_it_keeps_the_payload_out_of_the_log_of_a_bad_signature(
        runner_settings: RunnerSettings, sink_redis: redis.Redis,
        caplog: pytest.LogCaptureFixture) -> None:
    body = payload(mock_graph())
    assert worker.execute(body, "0" * 64, settings=runner_settings,
                          client=sink_redis) == "bad_signature"
    assert worker.execute(body, None, settings=runner_settings,
                          client=sink_redis) == "bad_signature"
    assert worker.execute("junk", "x", settings=runner_settings,
                          client=sink_redis) == "bad_signature"
    assert "invalid signature" in caplog.text
    assert credential_of(body) not in caplog.text and body["run_id"] not in caplog.text


@pytest.mark.allow_output  # each run's end is logged
def test_the_runs_of_a_process_share_one_connection_to_the_listener(
        runner_settings: RunnerSettings, sink_redis: redis.Redis) -> None:
    with kept_alive_peer() as peer:
        bodies = [payload(knowledge_graph(), callback_url=peer.url) for _ in range(3)]
        for body in bodies:
            assert run(body, runner_settings, sink_redis) == "completed"
        worker.close_listener_session()  # as when the pool process exits
        assert wait_for(lambda: peer.closed == 1, 5)
    assert peer.accepted == 1
    assert [auth for _m, _p, auth, _c in peer.requests] == [
        f"Bearer {credential_of(body)}" for body in bodies]
