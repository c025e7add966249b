"""kionga.prepared_sql.new_row builds the same unsaved row as the model's keyword
constructor (every default, related instances cached), without its keyword path."""

import uuid
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from designs.models import Design
from kionga.models import Project
from kionga.prepared_sql import new_row
from runs.models import Run, RunCredential

pytestmark = pytest.mark.django_db


def _values(row: Any) -> dict[str, Any]:
    return {f.attname: getattr(row, f.attname) for f in type(row)._meta.concrete_fields}


def test_it_builds_what_the_keyword_constructor_builds(alice: Any, acme: Project) -> None:
    design = Design(id=uuid.uuid4(), project=acme, revision=3)
    given = {"id": uuid.uuid4(), "project": acme, "design": design, "revision": 3,
             "input": "hi", "created_by": alice, "from_run_id": None, "resources": {}}
    built, expected = new_row(Run, **given), Run(**given)
    assert _values(built) == _values(expected) and built._state.adding
    with CaptureQueriesContext(connection) as queries:  # related rows cached, not read
        assert (built.project, built.design, built.created_by) == (acme, design, alice)
    assert queries.captured_queries == []
    credential = new_row(RunCredential, run=built, token_hash="h")
    assert credential.run is built and built.credential is credential
    assert _values(credential) == _values(RunCredential(run=built, token_hash="h"))


def test_it_refuses_an_unknown_field() -> None:
    with pytest.raises(TypeError, match="'nope'"):
        new_row(Project, nope=1)
