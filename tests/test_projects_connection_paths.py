"""An API connection's allowed_paths (set through the resources API) bound what a run
may call: prefixes at a "/" boundary; none listed, anything below the base URL."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from kionga.models import Project
from kionga.resource_models import ApiConnection
from tests.conftest import Api
from tests.internal_helpers import json_answer, start_run, upstream
from tests.test_internal_connections import call

pytestmark = pytest.mark.urls("kionga.internal_urls")


@pytest.mark.parametrize(("path", "allowed"), [
    ("/orders", True), ("/orders/7?x=1", True), ("/orders-archive", False),
    ("/users", False), ("/%6frders/1", True)])
def test_only_allowed_paths_are_called(api: Api, carol: User, acme: Project, path: str,
                                       allowed: bool) -> None:
    with upstream(lambda *_: json_answer(200, {})) as (url, seen):
        ApiConnection.objects.create(project=acme, key="tickets", base_url=url + "/api",
                                     allowed_paths=["/orders"])
        _, raw = start_run(carol, acme)
        response = call(raw, "GET", path)
    if allowed:
        assert response.status_code == 200, response.content
    else:
        api.assert_error(response, 403, "resource_denied")
        assert seen == []
