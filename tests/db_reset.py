"""The database reset after a transactional test (``django_db(transaction=True)``).

Django's reset is ``flush``: one TRUNCATE of every table (~57), then the post_migrate
signal, which writes the content types and permissions again. A TRUNCATE gives each
table, index and TOAST table a new file and fsyncs at commit: 1-3 s a test on the CI
machine, ~375 transactional tests, most of the suite's time. Most tests fill a handful
of tables with a few rows, and a DELETE of those rows costs milliseconds (measured in
docs/decisions/transactional-test-reset.md).

So: DELETE the rows of the tables that have any, in one transaction (Django's foreign
keys are DEFERRABLE INITIALLY DEFERRED: the order does not matter). The content types
and permissions, which flush would write again as they were, stay; a test that changed
them (their count or largest id moved) gets Django's flush instead, which writes them
anew. The result is flush's: every table empty but those two, which hold post_migrate's
rows.
"""

from __future__ import annotations

from typing import Any

from django.core.management import call_command
from django.db import DatabaseError, connections, transaction

# Tables the post_migrate signal fills (django.contrib.contenttypes and .auth): kept.
KEPT_TABLES = ("django_content_type", "auth_permission")

# A concurrent writer (an e2e stack's process) may add a row between the check of the
# tables and the commit: the commit's foreign key check then refuses it; check again.
ATTEMPTS = 3

# Deleted rows stay as dead tuples until a VACUUM (the CI server runs no autovacuum):
# a table that lost this many since its last VACUUM gets one.
VACUUM_AFTER_DEAD_ROWS = 2_000

_dead_rows: dict[tuple[str, str], int] = {}


def kept_state(using: str) -> tuple[int, ...]:
    """Count and largest id of each kept table: what shows a test changed them."""
    with connections[using].cursor() as cursor:
        cursor.execute(" UNION ALL ".join(
            f'SELECT count(*), coalesce(max(id), 0) FROM "{table}"' for table in KEPT_TABLES))
        return tuple(value for row in cursor.fetchall() for value in row)


def _tables_with_rows(using: str) -> list[str]:
    connection = connections[using]
    tables = sorted(set(connection.introspection.django_table_names(
        only_existing=True, include_views=False)) - set(KEPT_TABLES))
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(
            f"SELECT %s WHERE EXISTS (SELECT 1 FROM {quote(table)})" for table in tables),
            tables)
        return [row[0] for row in cursor.fetchall()]


def _delete_rows(using: str) -> dict[str, int]:
    """Empty every table that has rows; the rows deleted per table."""
    connection = connections[using]
    quote = connection.ops.quote_name
    deleted: dict[str, int] = {}
    with transaction.atomic(using=using), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        for table in _tables_with_rows(using):
            cursor.execute(f"DELETE FROM {quote(table)}")
            deleted[table] = cursor.rowcount
    return deleted


def _vacuum(using: str, deleted: dict[str, int]) -> None:
    connection = connections[using]
    for table, rows in deleted.items():
        key = (connection.settings_dict["NAME"], table)
        _dead_rows[key] = _dead_rows.get(key, 0) + rows
        if _dead_rows[key] >= VACUUM_AFTER_DEAD_ROWS:
            with connection.cursor() as cursor:  # autocommit: VACUUM runs in none
                cursor.execute(f"VACUUM {connection.ops.quote_name(table)}")
            _dead_rows[key] = 0


def flush(using: str) -> None:
    """Django's reset (TransactionTestCase._fixture_teardown without available_apps)."""
    call_command("flush", verbosity=0, interactive=False, database=using,
                 reset_sequences=False, allow_cascade=False, inhibit_post_migrate=False)


def reset(using: str, kept_before: tuple[int, ...]) -> None:
    """Leave the database as :func:`flush` would, by DELETE when the kept tables are as
    they were (``kept_before``); else, or when the DELETE keeps failing, by flush."""
    if kept_state(using) != kept_before:
        flush(using)
        return
    for _ in range(ATTEMPTS):
        try:
            deleted = _delete_rows(using)
        except DatabaseError:
            continue
        _vacuum(using, deleted)
        return
    flush(using)


_kept: dict[str, tuple[int, ...]] = {}


def install() -> None:
    """Make pytest-django's transactional tests reset by :func:`reset`.

    pytest-django builds its test case class from django.test.TransactionTestCase
    while the test runs, so the hook is that class's own: its fixture setup records
    the kept tables' state before the test, its teardown resets. Test cases with
    ``available_apps`` or ``serialized_rollback`` keep Django's own reset.
    """
    from django.test import TransactionTestCase

    case_class: Any = TransactionTestCase  # its stubs leave the private hooks out
    django_setup = case_class._fixture_setup.__func__  # a classmethod's function
    django_teardown = case_class._fixture_teardown

    def own_reset(case: Any) -> bool:
        return case.available_apps is None and not case.serialized_rollback

    def fixture_setup(cls: Any) -> None:
        django_setup(cls)
        if own_reset(cls):
            for using in cls._databases_names(include_mirrors=False):
                _kept[using] = kept_state(using)

    def fixture_teardown(self: Any) -> None:
        if not own_reset(self):
            django_teardown(self)
            return
        for using in self._databases_names(include_mirrors=False):
            reset(using, _kept.pop(using, ()))

    case_class._fixture_setup = classmethod(fixture_setup)
    case_class._fixture_teardown = fixture_teardown
