"""The writes of a run start in one statement: the run, its credential and the
`run.started` audit row (data-modifying CTEs, so one round trip and no ORM work),
prepared (kionga.prepared_sql).
One statement is atomic on its own: callers need no transaction around it.

The rows are the ORM's own instances, built with every default and converted with
each field's get_db_prep_save, so what is stored is what Model.save would store.
"""

from __future__ import annotations

import functools
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections, models

from kionga import prepared_sql
from kionga.models import AuditEvent
from runs.models import Run, RunCredential


def insert_started(run: Run, credential: RunCredential, audit_row: AuditEvent) -> None:
    """Store the three new rows (their auto_now_add times set here)."""
    prepared_sql.stamp([run, credential, audit_row])
    db = connections[DEFAULT_DB_ALIAS]  # once: each `connection.x` is a context lookup
    (run_sql, run_fields), (cred_sql, cred_fields), (audit_sql, audit_fields) = (
        _insert(type(row)) for row in (run, credential, audit_row))
    params = [f.get_db_prep_save(getattr(row, f.attname), db)
              for row, fields in ((run, run_fields), (credential, cred_fields),
                                  (audit_row, audit_fields)) for f in fields]
    # Prepared and bound server side: the same text for every start, so PostgreSQL
    # plans it once per connection and the JSON values are not escaped in Python.
    prepared_sql.execute(f"WITH r AS ({run_sql}), c AS ({cred_sql}) {audit_sql}", params)
    for row in (run, credential, audit_row):
        row._state.adding = False
        row._state.db = db.alias


@functools.cache
def _insert(model: type[models.Model]) -> tuple[str, tuple[models.Field[Any, Any], ...]]:
    """The INSERT of one row of `model` (every concrete field but an auto key), and its
    fields in the order of its placeholders."""
    fields = prepared_sql.inserted_fields(model)
    columns = ", ".join(connection.ops.quote_name(str(f.column)) for f in fields)
    marks = ", ".join(["%s"] * len(fields))
    return f"INSERT INTO {model._meta.db_table} ({columns}) VALUES ({marks})", fields
