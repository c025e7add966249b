"""The reset after a transactional test (tests/db_reset.py) leaves the database as
Django's flush does: every table empty but the content types and permissions, which
hold post_migrate's rows."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.test import TransactionTestCase

from runs.models import Run
from tests import db_reset
from tests.ingest_helpers import make_run

pytestmark = pytest.mark.django_db(transaction=True)  # the reset commits


def tables_with_rows() -> set[str]:
    tables = connection.introspection.django_table_names(only_existing=True,
                                                         include_views=False)
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(
            f'SELECT %s WHERE EXISTS (SELECT 1 FROM "{table}")' for table in tables), tables)
        return {row[0] for row in cursor.fetchall()}


def permissions() -> set[tuple[str, str, str]]:
    return set(Permission.objects.values_list("content_type__app_label",
                                              "content_type__model", "codename"))


def test_it_empties_every_table_but_post_migrates(alice: Any, acme: Any) -> None:
    kept = db_reset.kept_state("default")
    before = permissions()
    make_run(alice, acme)  # user, project, membership, design, revision, run
    assert {"auth_user", "kionga_project", Run._meta.db_table} <= tables_with_rows()
    db_reset.reset("default", kept)
    assert tables_with_rows() == set(db_reset.KEPT_TABLES)
    assert permissions() == before
    assert db_reset.kept_state("default") == kept


def test_changed_post_migrate_rows_are_written_anew(alice: Any) -> None:
    kept = db_reset.kept_state("default")
    before = permissions()
    Permission.objects.create(codename="own", name="own",
                              content_type=ContentType.objects.get_for_model(Run))
    db_reset.reset("default", kept)
    assert permissions() == before  # the test's permission is gone, Django's are back
    assert tables_with_rows() == set(db_reset.KEPT_TABLES)


def test_a_row_added_after_the_check_is_deleted_too(alice: Any, acme: Any,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # As when another process adds a run after the tables were checked: deleting its
    # project and user alone breaks the deferred foreign keys at commit; again, all.
    make_run(alice, acme)
    checks = []
    tables_with_rows_then = db_reset._tables_with_rows

    def late_check(using: str) -> list[str]:
        checks.append(using)
        found = tables_with_rows_then(using)
        return [t for t in found if t != Run._meta.db_table] if len(checks) == 1 else found

    monkeypatch.setattr(db_reset, "_tables_with_rows", late_check)
    db_reset.reset("default", db_reset.kept_state("default"))
    assert len(checks) == 2
    assert tables_with_rows() == set(db_reset.KEPT_TABLES)


def test_transactional_tests_reset_by_it() -> None:
    case_class: Any = TransactionTestCase
    assert case_class._fixture_teardown.__module__ == db_reset.__name__
