"""Repository-wide pytest setup.

The suite runs against real PostgreSQL (bin/test sets DATABASE_URL). Without
it, settings fall back to SQLite, which hides real-database behaviour
(locking, JSON operators, constraints), so database tests refuse to run.
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: Any) -> None:
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.exit(
            "Database tests need PostgreSQL: run bin/test, or set DATABASE_URL=postgres://...",
            returncode=2,
        )


# Fixtures shared by several test files, kept beside the tests that use them.
pytest_plugins = ["tests.runs_helpers"]
