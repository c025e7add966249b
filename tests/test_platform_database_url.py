"""DATABASE_URL: PostgreSQL only (the code speaks one SQL dialect); another database's
URL stops the settings with a clear error, and none at all means bin/demo's embedded
PostgreSQL (kionga.embedded_postgres)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kionga import embedded_postgres

ROOT = Path(__file__).resolve().parent.parent
SHOW = "import django; django.setup(); from django.db import connection; print(connection.vendor, "\
       "connection.settings_dict['HOST'], connection.settings_dict['PORT'], "\
       "connection.settings_dict['NAME'])"


def settings_with(url: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["DJANGO_SETTINGS_MODULE"] = "kionga.settings"
    if url is not None:
        env["DATABASE_URL"] = url
    return subprocess.run([sys.executable, "-c", SHOW], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)


def test_another_database_is_refused(tmp_path: Path) -> None:
    for url in (f"sqlite:///{tmp_path / 'kionga.sqlite3'}", "mysql://u:p@127.0.0.1/kionga"):
        done = settings_with(url)
        assert done.returncode != 0
        assert "DATABASE_URL must be a PostgreSQL URL" in done.stderr, done.stderr
    assert not (tmp_path / "kionga.sqlite3").exists()


def test_no_url_is_the_demos_embedded_postgresql() -> None:
    done = settings_with(None)
    assert done.returncode == 0, done.stderr
    port = embedded_postgres.DEFAULT_PORT
    assert done.stdout.split() == ["postgresql", "127.0.0.1", str(port), "kionga"]
    assert embedded_postgres.url() == f"postgres://postgres@127.0.0.1:{port}/kionga"
