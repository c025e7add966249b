"""A NUL (%00) in a URL's path or query is a 400, never a 500 (PostgreSQL cannot
hold U+0000, so it must not reach a lookup)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from kionga.models import Project
from kionga.resource_models import Dataset
from tests.internal_helpers import BASE, run_client, start_run


@pytest.mark.urls("kionga.internal_urls")
def test_it_refuses_nul_in_the_query_and_path_of_internal_routes(
    api: Any, carol: User, acme: Project
) -> None:
    Dataset._default_manager.create(project=acme, key="prices")
    _, raw = start_run(carol, acme)
    client = run_client(raw)
    for url in (BASE + "datasets/prices/object?key=%00", BASE + "datasets/prices/object?%00=a",
                BASE + "datasets/pr%00ices/object?key=a"):
        error = api.assert_error(client.get(url), 400, "invalid_request")
        assert "NUL" in error["message"]


def test_it_refuses_nul_in_public_urls(api: Any, alice: User, acme: Project) -> None:
    client = api.client_for(alice)
    api.assert_error(client.get("/api/v1/agent-designs?project_id=%00"), 400, "invalid_request")
    api.assert_error(client.get("/api/v1/agent-designs/a%00b"), 400, "invalid_request")
    admin = Client().get("/admin/login/?next=%00")
    assert admin.status_code == 400
