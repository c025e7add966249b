"""A no-op Celery app: the floor a run's round trip is compared with (bench/runs.py)."""

from __future__ import annotations

import os

from celery import Celery

app = Celery("floor", broker=os.environ["REDIS_URL"], backend=os.environ["REDIS_URL"])
app.conf.update(task_serializer="json", accept_content=["json"], result_serializer="json",
                worker_prefetch_multiplier=1, task_default_queue="floor")


@app.task(name="floor.noop")
def noop() -> int:
    return 1
