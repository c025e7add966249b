"""kionga.prepared_sql.insert_rows: a batch of new rows in one prepared statement stores
what Model.save would (defaults, auto_now_add, JSON, null links), whatever the text."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kionga import audit, prepared_sql
from kionga.models import AuditEvent, Project

pytestmark = pytest.mark.django_db

# Text PostgreSQL stores (no U+0000, no lone surrogates): quotes, backslashes, braces
# and commas are what an array literal would have to escape.
TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"),
               max_size=40)
DETAILS = st.dictionaries(TEXT, st.one_of(TEXT, st.integers(-2**40, 2**40), st.none(),
                                          st.lists(TEXT, max_size=3)), max_size=4)


def _stored(row: AuditEvent) -> tuple[Any, ...]:
    return (row.project_id, row.actor_id, row.action, row.target_type, row.target_id,
            row.details)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(actions=st.lists(st.tuples(TEXT.map(lambda t: t[:64]), DETAILS), min_size=1,
                        max_size=5))
def test_rows_read_back_as_saved_ones_do(acme: Project, alice: User,
                                         actions: list[tuple[str, dict[str, Any]]]) -> None:
    AuditEvent.objects.all().delete()
    batch = [audit.row(action, project=acme if i % 2 else None, actor=alice,
                       target_type="run", target_id=i, details=details)
             for i, (action, details) in enumerate(actions)]
    expected = [_stored(audit.row(action, project=acme if i % 2 else None, actor=alice,
                                  target_type="run", target_id=i, details=details))
                for i, (action, details) in enumerate(actions)]
    prepared_sql.insert_rows(batch)
    stored = AuditEvent.objects.order_by("id")
    assert [_stored(row) for row in stored] == expected
    assert all(row.created_at is not None for row in stored)


def test_an_empty_batch_writes_nothing(db: None) -> None:
    prepared_sql.insert_rows([])
    assert not AuditEvent.objects.exists()


def test_statements_that_ask_are_prepared_once_per_connection(db: None) -> None:
    """prepare=True really prepares: Django's default (prepare_threshold None) made
    psycopg ignore it, and PostgreSQL parsed and planned every hot statement anew."""
    from django.db import connection

    query = "SELECT %b::integer + 1 /* test_statements_that_ask_are_prepared */"
    assert prepared_sql.fetch_all(query, [1]) == [(2,)]
    assert prepared_sql.fetch_all(query, [2]) == [(3,)]
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements "
                       "WHERE statement LIKE %s", ["%test_statements_that_ask_are_prepared%"])
        assert cursor.fetchone() == (1,)


def test_djangos_own_cursors_prepare_nothing(db: None) -> None:
    """Only the statements that ask are prepared: the ORM's (client-side bound, their
    text new with every value) never fill the server's statement cache."""
    from django.db import connection

    for n in range(8):
        AuditEvent.objects.filter(target_id=str(n)).exists()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements "
                       "WHERE statement LIKE '%%kionga_auditevent%%'")
        assert cursor.fetchone() == (0,)


def test_prepared_statements_are_planned_once(db: None) -> None:
    """A prepared statement's generic plan is used from its first execution: not a
    custom plan per execution while PostgreSQL compares the two."""
    from django.db import connection

    query = ("SELECT count(*) FROM kionga_auditevent WHERE id = ANY(%b::bigint[]) "
             "/* test_prepared_statements_are_planned_once */")
    for ids in ([1, 2], [3], [4, 5, 6]):
        assert prepared_sql.fetch_all(query, [ids]) == [(0,)]
    with connection.cursor() as cursor:
        cursor.execute("SELECT generic_plans, custom_plans FROM pg_prepared_statements "
                       "WHERE statement LIKE %s",
                       ["%test_prepared_statements_are_planned_once%"])
        assert cursor.fetchone() == (3, 0)
