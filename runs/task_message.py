"""A run task as a ready Celery message, published with one Redis call.

`Celery.send_task` builds the same message through routing, signals, a producer
from a pool and kombu's channel (~1 ms of the gateway's CPU per run); the runner's
queue is a Redis list (the broker is REDIS_URL), so the message is built here, in
Celery's task protocol 2 as kombu's Redis transport stores it, and LPUSHed onto the
queue: the runner (a Celery worker) cannot tell the difference.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import uuid
from typing import Final

import redis

from runner import protocol

_ORIGIN: Final = f"gen{os.getpid()}@{socket.gethostname()}"
_EMBED: Final = {"callbacks": None, "errbacks": None, "chain": None, "chord": None}


def task_message(run_id: str, payload: str, signature: str, time_limit: int) -> bytes:
    """`payload`: its canonical JSON, as signed; `time_limit`: the task's hard limit in
    seconds (runner/task_limits.py)."""
    task_id = str(uuid.uuid4())
    body = json.dumps([[payload, signature], {}, _EMBED]).encode("utf-8")
    # A short argsrepr: the message headers never show the graph or the sealed secrets.
    argsrepr = f"(run {run_id})"
    message = {
        "body": base64.b64encode(body).decode("ascii"),
        "content-encoding": "utf-8",
        "content-type": "application/json",
        "headers": {
            "lang": "py", "task": protocol.TASK_NAME, "id": task_id, "shadow": None,
            "eta": None, "expires": None, "group": None, "group_index": None, "retries": 0,
            "timelimit": [None, time_limit], "root_id": task_id, "parent_id": None,
            "argsrepr": argsrepr, "kwargsrepr": "{}", "origin": _ORIGIN,
            "ignore_result": None, "replaced_task_nesting": 0, "stamped_headers": None,
            "stamps": {},
        },
        "properties": {
            "correlation_id": task_id, "reply_to": "", "argsrepr": argsrepr,
            "kwargsrepr": "{}", "delivery_mode": 2,
            "delivery_info": {"exchange": "", "routing_key": protocol.QUEUE},
            "priority": 0, "body_encoding": "base64", "delivery_tag": str(uuid.uuid4()),
        },
    }
    return json.dumps(message).encode("utf-8")


def publish(client: redis.Redis, run_id: str, payload: str, signature: str,
            time_limit: int) -> None:
    client.lpush(protocol.QUEUE, task_message(run_id, payload, signature, time_limit))
