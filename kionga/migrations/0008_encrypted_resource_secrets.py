"""Resource secrets stored encrypted (kionga.secret_box): the columns become text, then
every existing value is encrypted under the first key of KIONGA_SECRET_KEYS, bound to
its table, column, project and key (kionga.secret_fields)."""

from __future__ import annotations

import json
from typing import Any

from django.db import migrations

import kionga.secret_fields

# (table, column, holds JSON): the columns this migration encrypts.
COLUMNS = [("kionga_modelendpoint", "secret", False), ("kionga_function", "secret", False),
           ("kionga_apiconnection", "secret_headers", True)]


def _plaintext(text: str, is_json: bool) -> str:
    if not is_json:
        return text
    value = json.loads(text) if text else {}
    return json.dumps(value, sort_keys=True) if value else ""


def encrypt_existing(apps: Any, schema_editor: Any) -> None:
    from kionga import secret_box

    with schema_editor.connection.cursor() as cursor:
        for table, column, is_json in COLUMNS:
            cursor.execute(f'SELECT id, project_id, key, "{column}" FROM {table}')
            for pk, project_id, key, stored in cursor.fetchall():
                if stored is None or secret_box.is_sealed(stored):
                    continue
                text = _plaintext(stored, is_json)
                sealed = text and secret_box.encrypt(
                    text, secret_box.context(table, column, project_id, key))
                cursor.execute(f'UPDATE {table} SET "{column}" = %s WHERE id = %s',
                               [sealed, pk])


def decrypt_existing(apps: Any, schema_editor: Any) -> None:
    from kionga import secret_box

    with schema_editor.connection.cursor() as cursor:
        for table, column, is_json in COLUMNS:
            cursor.execute(f'SELECT id, project_id, key, "{column}" FROM {table}')
            for pk, project_id, key, stored in cursor.fetchall():
                text = stored if not stored or not secret_box.is_sealed(stored) else \
                    secret_box.decrypt(stored, secret_box.context(table, column, project_id,
                                                                  key), f"{table}.{column}")
                if is_json:
                    text = text or "{}"
                cursor.execute(f'UPDATE {table} SET "{column}" = %s WHERE id = %s',
                               [text, pk])


class Migration(migrations.Migration):

    dependencies = [
        ("kionga", "0007_invitations_and_token_use"),
    ]

    operations = [
        migrations.AlterField(
            model_name="modelendpoint",
            name="secret",
            field=kionga.secret_fields.EncryptedTextField(
                blank=True, bound_to=("project_id", "key"), default=""),
        ),
        migrations.AlterField(
            model_name="function",
            name="secret",
            field=kionga.secret_fields.EncryptedTextField(
                blank=True, bound_to=("project_id", "key"), default=""),
        ),
        migrations.AlterField(
            model_name="apiconnection",
            name="secret_headers",
            field=kionga.secret_fields.EncryptedJSONField(
                blank=True, bound_to=("project_id", "key"), default=dict),
        ),
        migrations.RunPython(encrypt_existing, decrypt_existing),
    ]
