"""Logging filters named by settings.LOGGING."""

from __future__ import annotations

import importlib.util
import logging
import os
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


def _package_dir(name: str) -> str | None:
    spec = importlib.util.find_spec(name)
    locations = spec.submodule_search_locations if spec else None
    return os.path.join(list(locations)[0], "") if locations else None


class NoMcpPeerText(logging.Filter):
    """Drops the `mcp` package's own log lines (some through the root logger): they
    quote what an MCP server sent — a malformed message, a session ID — which may
    echo the secret headers the gateway sent it. kionga.mcp_client reports each
    failure itself, by resource and kind, through kionga.upstream."""

    def __init__(self) -> None:
        super().__init__()
        self.directory = _package_dir("mcp")

    def filter(self, record: logging.LogRecord) -> bool:
        return not (self.directory and record.pathname.startswith(self.directory))
