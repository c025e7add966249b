"""runner.worker.execute in this process: the paths a real engine does not take on demand."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from runner import protocol, worker
from runner.protocol import now_iso
from runner.settings import RunnerSettings, load_settings
from runner.sink import sink_client
from tests.runner_process.runner_kit import (
    REDIS_URL,
    TOKEN,
    credential_of,
    knowledge_graph,
    mock_graph,
    payload,
    slow_gateway,
    stream_events,
    wait_for,
)


@pytest.fixture
def settings() -> RunnerSettings:
    return load_settings({"KIONGA_DESIGNER_RUNNER_TOKEN": TOKEN, "REDIS_URL": REDIS_URL})


@pytest.fixture
def client(rds: redis.Redis) -> Iterator[redis.Redis]:
    conn = sink_client(REDIS_URL)
    yield conn
    conn.close()


def run(body: dict[str, Any], settings: RunnerSettings, client: redis.Redis) -> str:
    assert protocol.acquire_slot(client, body["run_id"], 8)
    return worker.execute(body, protocol.sign(body, TOKEN), settings=settings, client=client)


def crashing_engine(*, terminal: bool) -> Any:
    def fake(request: Any, *, emit: Any, **_: Any) -> Any:
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
        settings: RunnerSettings, client: redis.Redis, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "run_graph_sync", crashing_engine(terminal=False))
    body = payload(mock_graph())
    assert run(body, settings, client) == "internal_error"
    events = stream_events(client, body["run_id"])
    assert [(e["seq"], e["type"]) for e in events] == [
        (0, "run.started"), (1, "node.started"), (2, "run.failed")]
    assert events[-1]["reason"] == "internal_error"
    assert events[-1]["error"]["code"] == "node_error"
    assert client.zscore(protocol.SLOTS_KEY, body["run_id"]) is None


@pytest.mark.allow_output  # the crash is logged with its traceback
def test_it_adds_no_terminal_event_when_the_engine_sent_one(
        settings: RunnerSettings, client: redis.Redis, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "run_graph_sync", crashing_engine(terminal=True))
    body = payload(mock_graph())
    assert run(body, settings, client) == "internal_error"
    assert [e["type"] for e in stream_events(client, body["run_id"])] == [
        "run.started", "node.started", "run.completed"]


@pytest.mark.allow_output  # the lost lease is logged
def test_it_stops_a_run_whose_lease_ran_out(settings: RunnerSettings,
                                            client: redis.Redis) -> None:
    body = payload(knowledge_graph())
    outcome: list[str] = []
    with slow_gateway(delay=30) as (url, seen):
        body["callback_url"] = url
        thread = threading.Thread(target=lambda: outcome.append(run(body, settings, client)))
        thread.start()
        assert wait_for(lambda: bool(seen), 5)
        client.zrem(protocol.SLOTS_KEY, body["run_id"])  # as if the gateway reaped it
        thread.join(protocol.HEARTBEAT_SECONDS + 3)
    assert outcome == ["cancelled"]
    assert stream_events(client, body["run_id"])[-1]["type"] == "run.cancelled"


@pytest.mark.allow_output  # the dropped tasks are logged (without their payload)
def test_it_keeps_the_payload_out_of_the_log_of_a_bad_signature(
        settings: RunnerSettings, client: redis.Redis, caplog: pytest.LogCaptureFixture) -> None:
    body = payload(mock_graph())
    assert worker.execute(body, "0" * 64, settings=settings, client=client) == "bad_signature"
    assert worker.execute(body, None, settings=settings, client=client) == "bad_signature"
    assert worker.execute("junk", "x", settings=settings, client=client) == "bad_signature"
    assert "invalid signature" in caplog.text
    assert credential_of(body) not in caplog.text and body["run_id"] not in caplog.text
