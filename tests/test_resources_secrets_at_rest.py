"""Resource secrets are stored encrypted: a dump of the database holds no secret, the
gateway still reads them, a ciphertext moved to another row does not decrypt, and
nothing writes one in the clear."""

from __future__ import annotations

import os
import subprocess
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction

from kionga import secret_box
from kionga.models import Project
from kionga.resource_models import ApiConnection, Function, ModelEndpoint
from tests.conftest import Api
from tests.projects_helpers import resources_url

CANARIES = ("canary-model-7f3a9c", "canary-function-51be02", "canary-header-c0ffee")


def create_with_canaries(api: Api, alice: User, acme: Project) -> None:
    client = api.client_for(alice)
    bodies = {
        "model": {"id": "m", "base_url": "https://llm.example.com/v1", "model_name": "x",
                  "secret": CANARIES[0]},
        "function": {"id": "f", "url": "https://hooks.example.com/f", "secret": CANARIES[1]},
        "connection": {"id": "c", "base_url": "https://crm.example.com",
                       "secret_headers": {"Authorization": f"Bearer {CANARIES[2]}"}},
    }
    for kind, body in bodies.items():
        answer = client.post(resources_url(acme, kind), body, format="json")
        assert answer.status_code == 201, answer.content


def pg_dump() -> str:
    db = connection.settings_dict
    env = {**os.environ, "PGPASSWORD": str(db.get("PASSWORD") or "")}
    return subprocess.run(
        ["pg_dump", "-h", str(db["HOST"] or "127.0.0.1"), "-p", str(db["PORT"] or 5432),
         "-U", str(db["USER"]), "--data-only", str(db["NAME"])],
        env=env, capture_output=True, text=True, check=True, timeout=60).stdout


@pytest.mark.django_db(transaction=True)
def test_a_database_dump_holds_no_secret(api: Api, alice: User, acme: Project) -> None:
    create_with_canaries(api, alice, acme)
    dump = pg_dump()
    assert "kionga_modelendpoint" in dump and f"{secret_box.PREFIX}." in dump
    assert not [canary for canary in CANARIES if canary in dump]
    # The gateway still reads them.
    assert ModelEndpoint.objects.get(key="m").secret == CANARIES[0]
    assert Function.objects.get(key="f").secret == CANARIES[1]
    assert ApiConnection.objects.get(key="c").secret_headers == {
        "Authorization": f"Bearer {CANARIES[2]}"}


def stored(model: Any, pk: int, field: str) -> str:
    return str(model.objects.filter(pk=pk).values_list(field, flat=True).get())


def test_the_column_holds_ciphertext_under_the_first_key(acme: Project) -> None:
    endpoint = ModelEndpoint.objects.create(project=acme, key="m", base_url="https://a.example",
                                            model_name="x", secret="sk-one")
    value = stored(ModelEndpoint, endpoint.pk, "secret")
    assert value.startswith(f"{secret_box.PREFIX}.{secret_box.configured_keys().ids[0]}.")
    assert "sk-one" not in value
    empty = ModelEndpoint.objects.create(project=acme, key="e", base_url="https://a.example",
                                         model_name="x")
    assert stored(ModelEndpoint, empty.pk, "secret") == ""
    assert ModelEndpoint.objects.get(pk=empty.pk).secret == ""
    assert ApiConnection.objects.create(project=acme, key="c", base_url="https://a.example"
                                        ).secret_headers == {}
    assert ApiConnection.objects.get(key="c").secret_headers == {}


def test_a_ciphertext_copied_to_another_row_does_not_decrypt(acme: Project) -> None:
    first = Function.objects.create(project=acme, key="a", url="https://a.example", secret="s1")
    second = Function.objects.create(project=acme, key="b", url="https://a.example", secret="s2")
    Function.objects.filter(pk=second.pk).update(secret=stored(Function, first.pk, "secret"))
    with pytest.raises(secret_box.SecretKeyError, match="altered or copied from another row"):
        _ = Function.objects.get(pk=second.pk).secret
    assert Function.objects.get(pk=first.pk).secret == "s1"


def test_a_ciphertext_copied_to_another_column_does_not_decrypt(acme: Project) -> None:
    fn = Function.objects.create(project=acme, key="a", url="https://a.example", secret="s1")
    model = ModelEndpoint.objects.create(project=acme, key="a", base_url="https://a.example",
                                         model_name="x", secret="s2")
    ModelEndpoint.objects.filter(pk=model.pk).update(secret=stored(Function, fn.pk, "secret"))
    with pytest.raises(secret_box.SecretKeyError):
        _ = ModelEndpoint.objects.get(pk=model.pk).secret


def test_plaintext_is_never_written_around_the_model(acme: Project) -> None:
    fn = Function.objects.create(project=acme, key="a", url="https://a.example", secret="s1")
    with pytest.raises(ValueError, match="never written as plaintext"), transaction.atomic():
        Function.objects.filter(pk=fn.pk).update(secret="in-the-clear")
    assert Function.objects.get(pk=fn.pk).secret == "s1"


def test_a_secret_changed_on_the_instance_is_stored_anew(acme: Project) -> None:
    fn = Function.objects.create(project=acme, key="a", url="https://a.example", secret="s1")
    again = Function.objects.get(pk=fn.pk)
    again.secret = "s2"
    again.save(update_fields=["secret"])
    assert Function.objects.get(pk=fn.pk).secret == "s2"
    untouched = Function.objects.get(pk=fn.pk)
    before = stored(Function, fn.pk, "secret")
    untouched.name = "renamed"
    untouched.save()
    assert stored(Function, fn.pk, "secret") == before
