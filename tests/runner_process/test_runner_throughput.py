"""Sustained load: 300 runs through one runner, 8 in flight, every one completes once.

How fast is measured by bench/runner.py, not here (no timed tests).
"""

from __future__ import annotations

import redis
from celery import Celery

from tests.runner_process.runner_kit import Worker, mock_graph, payload, read_run, send
from tests.runner_process.runner_load import run_many

RUNS = 300


def test_it_completes_every_run_under_sustained_load(
        runner_worker: Worker, rds: redis.Redis, celery_client: Celery) -> None:
    graph = mock_graph()
    read_run(rds, send(celery_client, rds, payload(graph)))  # warm
    assert run_many(rds, celery_client, graph, RUNS) == {"run.completed": RUNS}
