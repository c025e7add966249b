"""Statements of the hot paths (run start, stream opening, the ingester), prepared
once per pooled connection and bound server side. PostgreSQL only.

Django's PostgreSQL backend binds parameters client side (psycopg's ClientCursor), so
the server parses and plans every statement anew, and arrays are spelled out as quoted
literals in Python (the ingester's batches spent more CPU escaping them than storing
them). A hot statement is the same text every time: it goes through a server-side
binding cursor on Django's own connection (so inside its transaction, if any) with
`prepare=True`, and PostgreSQL keeps its plan for that connection.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from django.db import connection

Params = Mapping[str, Any] | Sequence[Any]


def fetch_all(query: str, params: Params) -> list[tuple[Any, ...]]:
    with _cursor() as cursor, connection.wrap_database_errors:
        cursor.execute(query, params, prepare=True)
        return cursor.fetchall()


def execute(query: str, params: Params) -> None:
    # Errors become Django's (DataError, IntegrityError…), as on Django's own cursors.
    with _cursor() as cursor, connection.wrap_database_errors:
        cursor.execute(query, params, prepare=True)


def _cursor() -> psycopg.Cursor[Any]:
    connection.ensure_connection()
    return psycopg.Cursor(connection.connection)
