"""What the benchmarks that start the real stack do before it starts: a fresh database
of their own, migrated, and projects with an admin and an API token (manage.py
bootstrap), all through the product's own commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PG = "postgres://postgres@127.0.0.1:5432"


def manage(env: dict[str, str], *args: str) -> str:
    """`manage.py ARGS` with `env`; its standard output."""
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True).stdout


def fresh_database(env: dict[str, str], name: str) -> None:
    """Drop and create database `name` on the local PostgreSQL, then migrate it."""
    subprocess.run(["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", name],
                   check=True)
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", name], check=True)
    manage(env, "migrate", "-v", "0")


def bootstrap(env: dict[str, str], project: str, user: str) -> tuple[int, str]:
    """(project ID, a new API token of `user`, its admin)."""
    doc = json.loads(manage(env, "bootstrap", "--project", project, "--user", user, "--role",
                            "admin", "--json"))
    return int(doc["project_id"]), str(doc["token"])


def pct(values: list[float], q: float) -> float:
    """The `q` quantile of `values` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]
