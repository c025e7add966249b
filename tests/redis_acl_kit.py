"""A Redis started as compose starts it (docker/redis-start.sh with
docker/redis-users.acl), with clients of its `gateway` and `runner` users.

Not a test module.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import redis

from tests.docker_kit import REDIS_ACL, REDIS_START, load_compose, redis_settings
from tests.runner_process.runner_kit import free_port, wait_for

GATEWAY_PASSWORD = "gateway-pass-0123456789"
RUNNER_PASSWORD = "runner-pass-0123456789"


class AclRedis:
    """Redis as compose starts it (redis-start.sh, with the compose command's options as
    they are when nothing is set), on a free port and without persistence."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        env = {**os.environ, "REDIS_GATEWAY_PASSWORD": GATEWAY_PASSWORD,
               "REDIS_RUNNER_PASSWORD": RUNNER_PASSWORD, "REDIS_ACL_TEMPLATE": str(REDIS_ACL),
               "REDIS_ACL_FILE": str(folder / "users.acl")}
        compose = [part for name, value in redis_settings(load_compose()).items()
                   if name != "appendonly" for part in (f"--{name}", value)]
        self.proc = subprocess.Popen(
            ["sh", str(REDIS_START), *compose, "--port", str(self.port), "--bind", "127.0.0.1",
             "--dir", str(folder), "--save", "", "--appendonly", "no"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert wait_for(self._up, 10), "redis-start.sh did not start Redis"

    def url(self, user: str, password: str) -> str:
        return f"redis://{user}:{password}@127.0.0.1:{self.port}/0"

    def client(self, user: str, password: str) -> redis.Redis:
        return redis.Redis.from_url(self.url(user, password))

    def _up(self) -> bool:
        try:
            return bool(self.client("gateway", GATEWAY_PASSWORD).ping())
        except redis.RedisError:
            return False
