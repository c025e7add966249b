"""GET /healthz answers without authentication."""

from __future__ import annotations

import pytest

from tests.conftest import Api


@pytest.mark.django_db
def test_it_reports_ok(api: Api) -> None:
    response = api.anon().get("/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})
