"""Logging filters named by settings.LOGGING."""

from __future__ import annotations

import logging
from collections.abc import Iterable

# Celery's loggers of a task's INFO lines: beat's "Sending due task", the worker's
# "received" and the pool's "succeeded".
CELERY_TASK_LOGGERS = ("celery.beat", "celery.worker.strategy", "celery.app.trace")


class QuietTasks(logging.Filter):
    """Drops Celery's INFO lines about the given tasks (sweeps that run every few
    seconds and log what they changed themselves); warnings and errors pass."""

    def __init__(self, tasks: Iterable[str]) -> None:
        super().__init__()
        self.tasks = frozenset(tasks)

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or _task_name(record) not in self.tasks


def _task_name(record: logging.LogRecord) -> str | None:
    # The worker's and the pool's lines carry their context as `data` (extra=); beat's
    # line has the entry's name and task as its two arguments.
    data = getattr(record, "data", None)
    if isinstance(data, dict):
        return str(data.get("name"))
    if record.name == "celery.beat" and isinstance(record.args, tuple) and len(record.args) == 2:
        return str(record.args[1])
    return None
