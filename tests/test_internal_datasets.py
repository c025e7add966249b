"""GET datasets/{id}/object?key=: one object of a dataset of the run's project."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from kionga.models import Project
from kionga.resource_models import Dataset, DatasetObject
from tests.conftest import Api
from tests.internal_helpers import BASE, run_client, start_run

pytestmark = pytest.mark.urls("kionga.internal_urls")


def dataset(project: Project, key: str = "prices") -> Dataset:
    # Dataset.objects is the reverse accessor of DatasetObject (related_name="objects").
    found = Dataset._default_manager.create(project=project, key=key)
    DatasetObject.objects.create(dataset=found, key="greeting", value="Grüezi")
    DatasetObject.objects.create(dataset=found, key="a b/c", value={"tea": 3, "café": [1, 2]})
    return found


def read(credential: str, key: str | None, dataset_id: str = "prices") -> Any:
    params = {} if key is None else {"key": key}
    return run_client(credential).get(BASE + f"datasets/{dataset_id}/object", params)


def test_it_returns_a_string_value_as_text(carol: User, acme: Project) -> None:
    dataset(acme)
    _, raw = start_run(carol, acme)
    response = read(raw, "greeting")
    assert response.status_code == 200
    assert response.json() == {"key": "greeting", "text": "Grüezi", "content_type": "text/plain"}


def test_it_returns_other_json_as_compact_json(carol: User, acme: Project) -> None:
    dataset(acme)
    _, raw = start_run(carol, acme)
    assert read(raw, "a b/c").json() == {
        "key": "a b/c", "text": '{"tea":3,"café":[1,2]}', "content_type": "application/json"}


def test_it_answers_404_for_a_missing_key(api: Api, carol: User, acme: Project) -> None:
    dataset(acme)
    _, raw = start_run(carol, acme)
    api.assert_error(read(raw, "nope"), 404, "resource_denied")


def test_it_needs_a_key(api: Api, carol: User, acme: Project) -> None:
    dataset(acme)
    _, raw = start_run(carol, acme)
    api.assert_error(read(raw, None), 400, "invalid_request")
    api.assert_error(read(raw, ""), 400, "invalid_request")


def test_it_denies_another_projects_dataset_like_a_missing_one(
    api: Api, carol: User, acme: Project, evil: Project
) -> None:
    dataset(evil, key="theirs")
    _, raw = start_run(carol, acme)
    other = api.assert_error(read(raw, "greeting", "theirs"), 404, "resource_denied")
    missing = api.assert_error(read(raw, "greeting", "nowhere"), 404, "resource_denied")
    assert other["message"].replace("theirs", "X") == missing["message"].replace("nowhere", "X")
