"""Shared fixtures: named people in two tenants, and an authenticated API client.

- ``acme`` project: ``alice`` admin (owner), ``carol`` editor, ``bob`` viewer.
- ``evil`` project: ``mallory`` admin, an attacker from another tenant.
- ``charlie``: a signed-up user with no project at all.

``api.client_for(user)`` gives a DRF APIClient sending that user's bearer token;
every JSON answer it receives is validated against the OpenAPI document
(tests/openapi_check.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from kionga import prepared_sql
from kionga.models import Membership, Project, Role
from kionga.tokens import issue_token
from tests.deploy_helpers import cluster  # noqa: F401 (fixture: a loopback Kubernetes API)

# Fixtures: a real OpenID Connect provider on loopback, and the product configured for it.
from tests.oidc_peer import product_uses, provider  # noqa: F401
from tests.openapi_check import check_response

if TYPE_CHECKING:  # Only the type stubs define it.
    from rest_framework.response import _MonkeyPatchedResponse


class CheckedClient(APIClient):
    """APIClient that fails the test when a documented answer does not match its schema."""

    def request(self, **kwargs: Any) -> _MonkeyPatchedResponse:  # type: ignore[override]
        response = super().request(**kwargs)
        if response.get("Content-Type", "").startswith("application/json"):
            method, path = kwargs["REQUEST_METHOD"], kwargs["PATH_INFO"]
            check_response(method, path, response.status_code, response.json())
        return response


class Api:
    """Clients and assertions for API tests."""

    def token_for(self, user: User) -> str:
        return issue_token(user, name="test")

    def client_for(self, user: User | None) -> APIClient:
        """An APIClient authenticated with a fresh bearer token; None gives an anonymous one."""
        client = CheckedClient()
        if user is not None:
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {self.token_for(user)}")
        return client

    def anon(self) -> APIClient:
        return CheckedClient()

    def assert_error(self, response: Any, status: int, code: str) -> dict[str, Any]:
        """Check the one error shape every API error has; return the inner error object."""
        assert response.status_code == status, response.content
        assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
        body = response.json()
        assert set(body) == {"error"}, body
        error = body["error"]
        assert set(error) == {"code", "message", "details"}, error
        assert error["code"] == code, error
        assert isinstance(error["message"], str) and error["message"], error
        assert isinstance(error["details"], dict), error
        if code == "invalid_request":  # the one shape of field errors (docs/api.md)
            assert set(error["details"]) == {"fields"}, error
            fields = error["details"]["fields"]
            assert fields and all(isinstance(p, str) and messages and all(
                isinstance(m, str) for m in messages) for p, messages in fields.items()), error
        return dict(error)


def make_member(username: str, project: Project | None, role: str = Role.VIEWER) -> User:
    user = User.objects.create_user(username=username, password=f"{username}-password")
    if project is not None:
        Membership.objects.create(project=project, user=user, role=role)
    return user


@pytest.fixture
def api() -> Api:
    return Api()


@pytest.fixture
def acme(db: None) -> Project:
    return Project.objects.create(slug="acme", name="Acme")


@pytest.fixture
def evil(db: None) -> Project:
    return Project.objects.create(slug="evil", name="Evil Corp")


@pytest.fixture
def alice(acme: Project) -> User:
    return make_member("alice", acme, Role.ADMIN)


@pytest.fixture
def carol(acme: Project) -> User:
    return make_member("carol", acme, Role.EDITOR)


@pytest.fixture
def bob(acme: Project) -> User:
    return make_member("bob", acme, Role.VIEWER)


@pytest.fixture
def mallory(evil: Project) -> User:
    return make_member("mallory", evil, Role.ADMIN)


@pytest.fixture
def charlie(db: None) -> User:
    return make_member("charlie", None)


@pytest.fixture
def staff(db: None) -> Client:
    """A Django test client signed in as ``ops``, a superuser of the admin (ops staff)."""
    client = Client()
    # force_login: login() authenticates without a request, which django-axes refuses.
    client.force_login(User.objects.create_superuser("ops", "ops@example.com", "ops-password"))
    return client


@pytest.fixture
def prepared_reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """The (query, params) of every prepared read (kionga.prepared_sql.fetch_all) the test
    makes from here on, in order; the reads still go to the database."""
    asked: list[tuple[str, Any]] = []
    real = prepared_sql.fetch_all

    def noting(query: str, params: Any) -> Any:
        asked.append((query, params))
        return real(query, params)

    monkeypatch.setattr(prepared_sql, "fetch_all", noting)
    return asked


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Unexpected console output (stray prints, logged errors) fails a passing test.

    Tests that expect output consume it with ``capsys``/``capfd.readouterr()`` or
    are marked ``@pytest.mark.allow_output``.
    """
    outcome = yield
    report = outcome.get_result()
    if call.when != "call" or not report.passed or item.get_closest_marker("allow_output"):
        return
    printed = [
        f"--- {name} ---\n{text}"
        for name, text in report.sections
        if name.startswith("Captured std") and text
    ]
    if printed:
        report.outcome = "failed"
        report.longrepr = "unexpected console output:\n" + "\n".join(printed)
