"""The writes of a run start in one statement: the run, its credential and the
`run.started` audit row (data-modifying CTEs, so one round trip and no ORM work).

The rows are the ORM's own instances, built with every default and converted with
each field's get_db_prep_save, so what is stored is what Model.save would store;
another database than PostgreSQL (the SQLite demo) saves them through the ORM.
"""

from __future__ import annotations

from typing import Any

from django.db import connection, models
from django.utils import timezone

from kionga.models import AuditEvent
from runs.models import Run, RunCredential


def insert_started(run: Run, credential: RunCredential, audit_row: AuditEvent) -> None:
    """Store the three new rows (their auto_now_add times set here)."""
    now = timezone.now()
    run.created_at = credential.created_at = audit_row.created_at = now
    if connection.vendor != "postgresql":
        run.save(force_insert=True)
        credential.save(force_insert=True)
        audit_row.save(force_insert=True)
        return
    run_sql, run_params = _insert(run)
    cred_sql, cred_params = _insert(credential)
    audit_sql, audit_params = _insert(audit_row)
    with connection.cursor() as cursor:
        cursor.execute(f"WITH r AS ({run_sql}), c AS ({cred_sql}) {audit_sql}",
                       [*run_params, *cred_params, *audit_params])
    for row in (run, credential, audit_row):
        row._state.adding = False
        row._state.db = connection.alias


def _insert(row: models.Model) -> tuple[str, list[Any]]:
    meta = row._meta
    fields = [f for f in meta.concrete_fields
              if not (f.primary_key and isinstance(f, models.AutoField | models.BigAutoField))]
    columns = ", ".join(connection.ops.quote_name(str(f.column)) for f in fields)
    values = [f.get_db_prep_save(getattr(row, f.attname), connection) for f in fields]
    marks = ", ".join(["%s"] * len(values))
    return f"INSERT INTO {meta.db_table} ({columns}) VALUES ({marks})", values
