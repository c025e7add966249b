"""Every page gets the product's icon from /favicon.ico, without a static-file lookup."""

from __future__ import annotations

from tests.conftest import Api


def test_favicon_is_an_svg_icon_cached_for_a_day(api: Api) -> None:
    response = api.anon().get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml"
    assert response["Cache-Control"] == "public, max-age=86400"
    assert response.content.startswith(b"<svg ")
