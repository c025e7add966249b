"""Operations metrics benchmark (not a test): the two metrics routes over a million rows.

    .venv/bin/python bench/operations.py [--rows N] [--repeat N]

Uses the local PostgreSQL (a fresh `kionga_bench_ops` database, or --db), loads with one
INSERT ... SELECT over generate_series: N turns of one deployed agent spread over the
last 168 hours (5 % failed), and N runs of another project in the last 24 hours, then
rolls them up (operations.rollups.do_rebuild: rows loaded around the end path).
Times GET agents/{id}/operations (hours=24 and hours=168: all N turns) and GET
agent-designs/overview through Django's test client (the whole view, in-process).
Prints the medians; the last line is one JSON object (target: < 300 ms each).
--reuse measures the data loaded before (migrating first: the migration rolls up what
a database from before the rollups holds).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DB_NAME = "kionga_bench_ops"
PG = "postgres://postgres@127.0.0.1:5432"

LOAD_SQL = """
INSERT INTO runs_run (id, project_id, design_id, agent_id, version_id, content_sha256, status,
  input, session_id, allow_side_effects, stop_after, resources, error, tokens, cost,
  created_at, started_at, finished_at, latency_ms)
SELECT gen_random_uuid(), %(project)s, %(design)s, %(agent)s, %(version)s, repeat('a', 64),
  CASE WHEN i %% 20 = 0 THEN 'failed' ELSE 'completed' END, '', '', true, '', '{}',
  CASE WHEN i %% 20 = 0 THEN '{"code": "node_error", "message": "x"}'::jsonb END,
  (i %% 500) + 10, ((i %% 500) + 10) * 0.000002,
  now() - make_interval(secs => (i::float8 / %(rows)s) * %(span)s),
  now() - make_interval(secs => (i::float8 / %(rows)s) * %(span)s),
  now() - make_interval(secs => (i::float8 / %(rows)s) * %(span)s) + interval '1 second',
  CASE WHEN %(agent)s IS NULL THEN NULL ELSE 50 + (i::bigint * 7919) %% 3000 END
FROM generate_series(1, %(rows)s) AS i
"""


def median_ms(client: object, url: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        response = client.get(url)  # type: ignore[attr-defined]
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, response.content
    return round(statistics.median(times), 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--reuse", action="store_true", help="measure the data loaded before")
    parser.add_argument("--db", default=DB_NAME, help=f"database name (default {DB_NAME})")
    args = parser.parse_args()
    if not args.reuse:
        subprocess.run(["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", args.db],
                       check=True)
        subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", args.db], check=True)
    os.environ.update(DATABASE_URL=f"{PG}/{args.db}", DJANGO_SETTINGS_MODULE="kionga.settings",
                      KIONGA_THROTTLE_USER="1000000/minute")
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection
    from django.utils import timezone

    from deployments.models import Agent, Rollout
    from designs.actions import do_create_design
    from designs.publish import PublishRequest, do_publish
    from kionga.models import Membership, Project, Role
    from operations.rollups import KEEP, do_rebuild

    if args.reuse:
        call_command("migrate", verbosity=0)
        measure(Agent.objects.get(name="agent-bench"), Project.objects.get(slug="busy"),
                User.objects.get(username="bench"), args)
        return
    call_command("migrate", verbosity=0)
    user = User.objects.create_user("bench")
    graph = {"schema_version": 2, "nodes": [{"id": "input", "kind": "input"},
                                            {"id": "output", "kind": "output"}],
             "edges": [{"from": "input", "to": "output"}]}
    ids = {}
    for slug in ("agents", "busy"):
        project = Project.objects.create(slug=slug, name=slug)
        Membership.objects.create(project=project, user=user, role=Role.ADMIN)
        design = do_create_design(user, project, slug, "", graph)
        version, _ = do_publish(user, design, PublishRequest(1, "", None))
        ids[slug] = (project, design, version)
    project, design, version = ids["agents"]
    agent = Agent.objects.create(project=project, design=design, name="agent-bench",
                                 version=version, settings={})
    Rollout.objects.create(agent=agent, version=version)
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(LOAD_SQL, {"project": project.pk, "design": design.pk, "agent": agent.pk,
                                  "version": str(version.pk), "rows": args.rows,
                                  "span": 168 * 3600})
        busy, busy_design, busy_version = ids["busy"]
        cursor.execute(LOAD_SQL, {"project": busy.pk, "design": busy_design.pk, "agent": None,
                                  "version": str(busy_version.pk), "rows": args.rows,
                                  "span": 24 * 3600 - 60})
        cursor.execute("VACUUM ANALYZE runs_run")
    print(f"loaded 2 x {args.rows:,} rows in {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    do_rebuild(timezone.now() - KEEP)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE operations_rollup")
        cursor.execute("SELECT count(*) FROM operations_rollup")
        rows = cursor.fetchone()[0]  # type: ignore[index]
    print(f"rolled up into {rows:,} rows in {time.perf_counter() - started:.1f} s")
    measure(agent, ids["busy"][0], user, args)


def measure(agent: Any, busy: Any, user: Any, args: argparse.Namespace) -> None:
    from django.test import Client

    from kionga.tokens import issue_token

    token = issue_token(user, "bench")
    client = Client(HTTP_HOST="localhost", HTTP_AUTHORIZATION=f"Bearer {token}")
    operations_url = f"/api/v1/agents/{agent.pk}/operations"
    median_ms(client, operations_url, 2)  # warm
    figures = {
        "operations_ms": median_ms(client, operations_url, args.repeat),
        "operations_168h_ms": median_ms(client, operations_url + "?hours=168", args.repeat),
        "overview_ms": median_ms(client, f"/api/v1/agent-designs/overview?project_id={busy.pk}",
                                 args.repeat),
    }
    print(f"operations (24 h, {args.rows // 7:,} turns): median {figures['operations_ms']} ms")
    print(f"operations (168 h, {args.rows:,} turns): median {figures['operations_168h_ms']} ms")
    print(f"overview ({args.rows:,} runs in 24 h): median {figures['overview_ms']} ms")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
