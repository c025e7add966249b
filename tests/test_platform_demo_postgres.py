"""bin/demo's embedded PostgreSQL (kionga.embedded_postgres), started as bin/demo starts
it, in a fresh directory: the migrations apply, the operations dashboards answer (the API's
and the admin's), and the data is still there after a restart. What an interrupted first
start left is made anew; another PostgreSQL version's data is refused, not touched."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from kionga import embedded_postgres

ROOT = Path(__file__).resolve().parent.parent

# bin/demo's next commands (bootstrap, demo_admin), in one process to start Django once,
# then both dashboards of the demo project through Django's own request handling.
DASHBOARDS = """
import io, json, sys
import django
django.setup()
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
out = io.StringIO()
call_command("bootstrap", "--project", "demo", "--user", "demo", "--role", "admin", "--json",
             stdout=out)
boot = json.loads(out.getvalue())
call_command("demo_admin", "--project", "demo", "--password-file", sys.argv[1],
             stdout=io.StringIO())
token, project = boot["token"], boot["project_id"]
api = Client().get(f"/api/v1/agent-designs/overview?project_id={project}",
                   HTTP_AUTHORIZATION=f"Bearer {token}")
staff = Client()
staff.force_login(User.objects.get(username="admin"))
page = staff.get(f"/admin/operations/projectoperations/{project}/change/")
print(json.dumps([project, api.status_code, api.json(), page.status_code,
                  b"Operations: demo" in page.content]))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Demo:
    """The commands bin/demo runs, with its environment."""

    def __init__(self, work: Path, port: int) -> None:
        self.work = work
        self.env = {**os.environ, "KIONGA_EMBEDDED_POSTGRES_PORT": str(port),
                    "DJANGO_ALLOWED_HOSTS": "testserver"}
        self.env.pop("DATABASE_URL", None)
        self.env["DATABASE_URL"] = self.python("-m", "kionga.embedded_postgres", "--url")
        self.server: subprocess.Popen[bytes] | None = None

    def python(self, *args: str) -> str:
        done = subprocess.run([sys.executable, *args], cwd=ROOT, env=self.env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def start(self) -> None:
        self.server = subprocess.Popen(
            [sys.executable, "-m", "kionga.embedded_postgres", "--dir",
             str(self.work / "postgres")],
            cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL,
            stderr=(self.work / "postgres.log").open("ab"))
        deadline = time.monotonic() + 60
        while True:
            try:
                psycopg.connect(self.env["DATABASE_URL"], connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                assert self.server.poll() is None, (self.work / "postgres.log").read_text()
                assert time.monotonic() < deadline, "the embedded PostgreSQL did not answer"
                time.sleep(0.1)

    def stop(self) -> None:
        if self.server is not None and self.server.poll() is None:
            self.server.send_signal(signal.SIGINT)  # PostgreSQL's fast shutdown
            self.server.wait(30)
        self.server = None

    def query(self, sql: str) -> list[tuple[object, ...]]:
        with psycopg.connect(self.env["DATABASE_URL"]) as db:
            return db.execute(sql).fetchall()


@pytest.fixture
def demo() -> Iterator[Demo]:
    # Not pytest's tmp_path: as root the server's system user must reach the directory's
    # parent (kionga.embedded_postgres opens it to others), and pytest's base stays 0700.
    with tempfile.TemporaryDirectory(prefix="kionga-demo-") as work:
        started = Demo(Path(work), free_port())
        try:
            yield started
        finally:
            started.stop()


def test_the_demo_runs_on_its_embedded_postgresql(demo: Demo) -> None:
    (demo.work / "postgres.init").mkdir()  # an interrupted first start's leftovers
    (demo.work / "postgres.init" / "PG_VERSION").write_text("18\n")
    demo.start()
    version = demo.query("SHOW server_version_num")[0][0]
    assert int(str(version)) >= 180000
    demo.python("manage.py", "migrate", "--noinput", "-v", "0")
    project, api, overview, page, titled = json.loads(
        demo.python("-c", DASHBOARDS, str(demo.work / "admin-password")))
    assert (api, page, titled) == (200, 200, True), (api, overview, page)
    assert (overview["project_id"], overview["runs"]) == (project, 0), overview

    demo.stop()
    demo.start()  # the same directory: nothing made anew
    assert demo.query("SELECT count(*) FROM auth_user WHERE username = 'demo'") == [(1,)]
    assert not (demo.work / "postgres.init").exists()


def test_another_versions_data_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "postgres"
    data.mkdir()
    (data / "PG_VERSION").write_text("16\n")
    with pytest.raises(SystemExit, match="holds PostgreSQL 16 data"):
        embedded_postgres.ensure_data_dir(data, None)
    assert [p.name for p in data.iterdir()] == ["PG_VERSION"]
