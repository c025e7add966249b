"""The public listener does not accept run credentials (they are not API tokens)."""

from __future__ import annotations

from django.contrib.auth.models import User

from kionga.models import Project
from tests.conftest import Api
from tests.internal_helpers import run_client, start_run


def test_it_refuses_a_run_credential_on_the_public_api(
    api: Api, carol: User, acme: Project
) -> None:
    _, raw = start_run(carol, acme)
    api.assert_error(run_client(raw).get("/api/v1/me"), 401, "invalid_token")


def test_it_refuses_a_run_credential_on_the_public_designs_api(
    api: Api, carol: User, acme: Project
) -> None:
    _, raw = start_run(carol, acme)
    api.assert_error(run_client(raw).get("/api/v1/agent-designs"), 401, "invalid_token")


def test_it_has_no_resource_routes(api: Api, carol: User, acme: Project) -> None:
    _, raw = start_run(carol, acme)
    api.assert_error(run_client(raw).get("/api/v1/knowledge-bases"), 404, "not_found")
