"""A private stack for the triggers' live tests (package scope): the gateway, the
internal listener and the gateway's Celery worker, all knowing the folder of the local
agent runtime (KIONGA_LOCAL_AGENTS_DIR), so the worker hands triggered turns to it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from tests.stack import Stack


@pytest.fixture(scope="package")
def agents_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("agents")


@pytest.fixture(scope="package")
def stack(agents_dir: Path, django_db_setup: Any, django_db_blocker: Any,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    url = f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    running = Stack(database_url=url, only=("gateway", "internal", "worker"),
                    extra_env={"KIONGA_LOCAL_AGENTS_DIR": str(agents_dir)},
                    log_dir=tmp_path_factory.mktemp("triggers-logs")).start()
    yield running
    running.stop()
