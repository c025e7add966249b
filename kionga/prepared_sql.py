"""Statements of the busiest paths (token lookup, run start, stream opening, the ingester), prepared
once per pooled connection and bound server side. PostgreSQL only.

Django's PostgreSQL backend binds parameters client side (psycopg's ClientCursor), so
the server parses and plans every statement anew, and arrays are spelled out as quoted
literals in Python (the ingester's batches spent more CPU escaping them than storing
them). A hot statement is the same text every time: it goes through a server-side
binding cursor on Django's own connection (so inside its transaction, if any) with
`prepare=True`, and PostgreSQL keeps its plan for that connection.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeVar, cast

import psycopg
from django.db import DEFAULT_DB_ALIAS, connection, connections, models
from django.utils import timezone

Params = Mapping[str, Any] | Sequence[Any]
M = TypeVar("M", bound=models.Model)


def fetch_all(query: str, params: Params) -> list[tuple[Any, ...]]:
    cursor = _cursor()
    with connection.wrap_database_errors:
        cursor.execute(query, params, prepare=True)
        return cursor.fetchall()


def execute(query: str, params: Params) -> None:
    cursor = _cursor()
    # Errors become Django's (DataError, IntegrityError…), as on Django's own cursors.
    with connection.wrap_database_errors:
        cursor.execute(query, params, prepare=True)


_KEPT: Final = "_kionga_prepared_cursor"


def _cursor() -> psycopg.Cursor[Any]:
    """The binding cursor of this thread's connection, kept on Django's connection
    object while its psycopg connection lives: a new cursor starts a new adaptation
    context, which looks up each parameter type's dumper again (a run start's writes
    bind ~40 values)."""
    db = connections[DEFAULT_DB_ALIAS]  # this thread's (or task's) own connection
    db.ensure_connection()
    raw = db.connection
    kept: psycopg.Cursor[Any] | None = getattr(db, _KEPT, None)
    if kept is None or kept.closed or kept.connection is not raw:
        kept = psycopg.Cursor(raw)
        setattr(db, _KEPT, kept)
    return kept


def insert_rows(rows: Sequence[models.Model]) -> None:
    """Insert new rows of one model in one prepared statement whatever their number
    (their auto keys are not read back), as Model.save would store them: each
    field's default and get_db_prep_save, auto_now_add set (not the ORM's bulk_create:
    it compiles anew for every batch size)."""
    if not rows:
        return
    query, fields = _insert_arrays(type(rows[0]))
    stamp(rows)
    execute(query, [[field.get_db_prep_save(getattr(row, field.attname), connection)
                     for row in rows] for field in fields])


def update_rows(rows: Sequence[models.Model], names: Sequence[str]) -> None:
    """Store the fields `names` of existing rows of one model in one prepared statement
    whatever their number, as the ORM's bulk_update would (each field's
    get_db_prep_save; no auto_now, no signals) without its CASE per row and field,
    which it compiles anew for every batch. The rows' keys must be distinct."""
    if not rows:
        return
    model = type(rows[0])
    query, fields = _update_arrays(model, tuple(names))
    key = model._meta.pk
    assert key is not None
    execute(query, [[key.get_db_prep_value(row.pk, connection) for row in rows],
                    *([field.get_db_prep_save(getattr(row, field.attname), connection)
                       for row in rows] for field in fields)])


def stamp(rows: Sequence[models.Model]) -> None:
    """Set the auto_now and auto_now_add times of new rows, one time for all, as their
    save() would (a statement of ours writes them without save())."""
    now = timezone.now()
    for row in rows:
        for field in _stamped_fields(type(row)):
            setattr(row, field.attname, now)


@functools.cache
def _stamped_fields(model: type[models.Model]) -> tuple[models.Field[Any, Any], ...]:
    return tuple(f for f in model._meta.concrete_fields
                 if getattr(f, "auto_now_add", False) or getattr(f, "auto_now", False))


@functools.cache
def inserted_fields(model: type[models.Model]) -> tuple[models.Field[Any, Any], ...]:
    """The fields an INSERT of a new `model` row writes: every concrete one but an
    auto key (the database numbers it)."""
    return tuple(f for f in model._meta.concrete_fields
                 if not (f.primary_key and isinstance(f, models.AutoField | models.BigAutoField)))


@functools.cache
def _insert_arrays(model: type[models.Model]) -> tuple[str, tuple[models.Field[Any, Any], ...]]:
    """INSERT … SELECT FROM unnest(one binary array per column) of inserted_fields; the
    text is the same for every batch, so it is prepared."""
    fields = inserted_fields(model)
    columns = ", ".join(connection.ops.quote_name(str(f.column)) for f in fields)
    arrays = ", ".join(f"%b::{f.db_type(connection)}[]" for f in fields)
    return f"INSERT INTO {model._meta.db_table} ({columns}) SELECT * FROM unnest({arrays})", fields


@functools.cache
def _update_arrays(model: type[models.Model],
                   names: tuple[str, ...]) -> tuple[str, tuple[models.Field[Any, Any], ...]]:
    """UPDATE … FROM unnest(the keys, then one binary array per field of `names`)."""
    key = model._meta.pk
    assert key is not None
    fields = tuple(cast("models.Field[Any, Any]", model._meta.get_field(name)) for name in names)
    quote = connection.ops.quote_name
    arrays = ", ".join(f"%b::{f.db_type(connection)}[]" for f in (key, *fields))
    aliases = ", ".join(f"c{i}" for i in range(len(fields) + 1))
    sets = ", ".join(f"{quote(str(f.column))} = u.c{i}" for i, f in enumerate(fields, 1))
    return (f"UPDATE {model._meta.db_table} t SET {sets} FROM unnest({arrays}) "
            f"AS u({aliases}) WHERE t.{quote(str(key.column))} = u.c0"), fields


def new_row(model: type[M], **values: Any) -> M:
    """`model(**values)`, a new unsaved row, built through the ORM's positional path
    (the one Model.from_db takes) instead of its keyword matching, which was a tenth of
    a run start's CPU: each field not given takes its default, and a related instance
    given by the field's name is cached as its descriptor caches it (a one-to-one's
    reverse side too)."""
    args: list[Any] = []
    related: list[tuple[Any, models.Model | None]] = []
    for field in model._meta.concrete_fields:
        if field.attname in values:
            args.append(values.pop(field.attname))
        elif isinstance(field, models.ForeignKey) and field.name in values:
            obj = values.pop(field.name)
            args.append(None if obj is None else getattr(obj, field.target_field.attname))
            related.append((field, obj))
        else:
            args.append(field.get_default())
    if values:
        raise TypeError(f"{model.__name__} has no field {sorted(values)[0]!r}")
    row = model(*args)
    for field, obj in related:
        field.set_cached_value(row, obj)
        if obj is not None and field.one_to_one:
            field.remote_field.set_cached_value(obj, row)
    return row


def columns(model: type[models.Model], alias: str) -> str:
    """The select list of `model`'s concrete fields under `alias`, in take()'s order."""
    return ", ".join(f'{alias}."{f.column}"' for f in model._meta.concrete_fields)


def take(model: type[M], values: Sequence[Any]) -> tuple[M, Sequence[Any]]:
    """An instance from the first values of a row, those of columns(model, …), as the
    ORM builds one (each field's database converters applied: JSON decoded and so
    on); and the values after them."""
    fields = model._meta.concrete_fields
    converted = []
    for field, value in zip(fields, values[:len(fields)], strict=True):
        for convert in field.get_db_converters(connection):
            value = convert(value, None, connection)
        converted.append(value)
    instance = model.from_db(connection.alias, [f.attname for f in fields], converted)
    return instance, values[len(fields):]
