"""The migration that introduces encryption encrypts the secrets already stored (and its
reverse gives them back in the clear)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from kionga import secret_box
from kionga.resource_models import ApiConnection, Function, ModelEndpoint

BEFORE = [("kionga", "0007_invitations_and_token_use")]
AFTER = [("kionga", "0008_encrypted_resource_secrets")]


def migrate(target: list[tuple[str, str]]) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(target)


@pytest.fixture(autouse=True)
def every_migration_after() -> Iterator[None]:
    """Going back to BEFORE also unapplies every later migration that depends on it (other
    apps' too): the test database gets them all back, whatever the test left."""
    yield
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


def raw(sql: str) -> list[tuple[object, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return list(cursor.fetchall())


@pytest.mark.django_db(transaction=True)
def test_existing_secrets_are_encrypted_by_the_migration() -> None:
    migrate(BEFORE)
    try:
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO kionga_project (slug, name, created_at) "
                           "VALUES ('acme', 'Acme', now()) RETURNING id")
            (project_id,) = cursor.fetchone()
    except Exception:
        migrate(AFTER)
        raise
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO kionga_modelendpoint (project_id, key, name, description, "
                "created_at, base_url, model_name, secret, price_prompt_per_1k, "
                "price_completion_per_1k) VALUES (%s, 'm', '', '', now(), "
                "'https://a.example', 'x', 'legacy-model-secret', 0, 0), "
                "(%s, 'e', '', '', now(), 'https://a.example', 'x', '', 0, 0)",
                [project_id, project_id])
            cursor.execute(
                "INSERT INTO kionga_function (project_id, key, name, description, created_at, "
                "url, secret) VALUES (%s, 'f', '', '', now(), 'https://a.example', "
                "'legacy-fn-secret')", [project_id])
            cursor.execute(
                "INSERT INTO kionga_apiconnection (project_id, key, name, description, "
                "created_at, base_url, secret_headers, allowed_methods, allowed_paths) "
                "VALUES (%s, 'c', '', '', now(), 'https://a.example', %s, '[]', '[]'), "
                "(%s, 'd', '', '', now(), 'https://a.example', '{}', '[]', '[]')",
                [project_id, json.dumps({"X-Key": "legacy-hdr-secret"}), project_id])
    finally:
        migrate(AFTER)
    columns = raw("SELECT secret FROM kionga_modelendpoint UNION ALL "
                  "SELECT secret FROM kionga_function UNION ALL "
                  "SELECT secret_headers FROM kionga_apiconnection")
    values = sorted(str(v) for (v,) in columns)
    assert values[:2] == ["", ""]
    assert all(secret_box.is_sealed(v) for v in values[2:]) and len(values) == 5
    assert not any("legacy" in v for v in values)
    assert ModelEndpoint.objects.get(key="m").secret == "legacy-model-secret"
    assert ModelEndpoint.objects.get(key="e").secret == ""
    assert Function.objects.get(key="f").secret == "legacy-fn-secret"
    assert ApiConnection.objects.get(key="c").secret_headers == {"X-Key": "legacy-hdr-secret"}
    assert ApiConnection.objects.get(key="d").secret_headers == {}
    # Backwards: in the clear again (a JSON object for the headers).
    migrate(BEFORE)
    try:
        assert raw("SELECT secret FROM kionga_function") == [("legacy-fn-secret",)]
        # Django reads jsonb as text on a raw cursor.
        headers = {key: json.loads(str(value)) for key, value in
                   raw("SELECT key, secret_headers FROM kionga_apiconnection")}
        assert headers["c"] == {"X-Key": "legacy-hdr-secret"} and headers["d"] == {}
    finally:
        migrate(AFTER)
