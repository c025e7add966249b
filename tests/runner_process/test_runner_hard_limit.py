"""A run that outlives its task's hard time limit (the message's `timelimit`, which the
gateway computes: runner.task_limits) is ended by its process's host: run.failed,
reason timeout; the process and its other runs go on."""

from __future__ import annotations

import time

import redis
from celery import Celery

from runner import protocol, task_signature
from tests.runner_process.runner_kit import (
    SESSION_QUEUE,
    TOKEN,
    Worker,
    knowledge_graph,
    mock_graph,
    payload,
    read_run,
    send,
    slot_for,
    slow_gateway,
    wait_for,
)

LIMIT = 2


def test_a_run_past_its_hard_time_limit_ends_timeout(runner_worker: Worker, rds: redis.Redis,
                                                      celery_client: Celery) -> None:
    with slow_gateway(delay=30) as (url, seen):
        body = payload(knowledge_graph(), callback_url=url)
        assert wait_for(lambda: slot_for(rds, body), 20)
        sent = time.monotonic()
        celery_client.send_task(protocol.TASK_NAME, args=[body, task_signature.sign(body, TOKEN)],
                                queue=SESSION_QUEUE, time_limit=LIMIT)
        ending = read_run(rds, body["run_id"], seconds=LIMIT + 10)[-1]
        took = time.monotonic() - sent
        assert seen  # it was waiting on its resource call when the limit came
    assert (ending["type"], ending["reason"], ending["error"]["code"]) == (
        "run.failed", "timeout", "timeout")
    assert f"hard time limit ({LIMIT} s)" in ending["error"]["message"]
    assert LIMIT <= took < LIMIT + 5
    assert not protocol.slot_alive(rds, body["run_id"])
    # The same worker runs the next run.
    other = read_run(rds, send(celery_client, rds, payload(mock_graph())), seconds=20)
    assert other[-1]["type"] == "run.completed"
