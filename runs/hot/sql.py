"""One query of a hot route, prepared once per pooled connection.

Django's PostgreSQL backend binds parameters client side (psycopg's ClientCursor), so
the server parses and plans every statement anew; a hot route's read is the same text
every time, so it goes through a server-side-binding cursor on the same pooled
connection with `prepare=True`: PostgreSQL keeps its plan for that connection.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import psycopg
from django.db import connection


def fetch_all(query: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    connection.ensure_connection()
    raw = connection.connection
    with psycopg.Cursor(raw) as cursor:
        cursor.execute(query, params, prepare=True)
        return cursor.fetchall()
