"""Swagger UI ("try it") at /api/docs/swagger/: served from drf-spectacular-sidecar's
static files under the strict CSP (no inline script, no CDN), set up to send the CSRF
header on a signed-in person's requests, and linked both ways with ReDoc."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from django.test import Client

pytestmark = pytest.mark.django_db
SWAGGER = "/api/docs/swagger/"
STATIC = "/" + settings.STATIC_URL.strip("/") + "/"


def static_file(url: str) -> str | None:
    """The file a static URL of ours is served from, or None."""
    if not url.startswith(STATIC):
        return None
    found = finders.find(url[len(STATIC):])
    return str(found) if found else None


def test_it_serves_swagger_ui_with_its_assets_from_our_static_files() -> None:
    response = Client().get(SWAGGER)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    scripts = re.findall(r'<script src="([^"]+)"', page)
    styles = re.findall(r'<link rel="stylesheet" href="([^"]+)"', page)
    assert len(re.findall(r"<script", page)) == len(scripts), "an inline script: the CSP blocks it"
    assert [s.rsplit("/", 1)[1] for s in scripts] == ["swagger-ui-bundle.js", "swagger-ui-init.js"]
    assert [s.rsplit("/", 1)[1] for s in styles] == ["swagger-ui.css"]
    assert all("/drf_spectacular_sidecar/swagger-ui-dist/" in url
               for url in [scripts[0], styles[0]]), (scripts, styles)
    missing = [url for url in scripts + styles if static_file(url) is None]
    assert missing == []
    assert "http://" not in page and "https://" not in page  # no CDN


def test_the_page_hands_the_start_script_the_schema_and_the_csrf_names_and_token() -> None:
    client = Client()
    page = client.get(SWAGGER).content.decode()
    assert 'data-schema-url="/api/schema/"' in page
    assert 'data-csrf-header="X-CSRFTOKEN"' in page  # settings.CSRF_HEADER_NAME, as sent
    assert f'data-csrf-cookie="{settings.CSRF_COOKIE_NAME}"' in page
    [token] = re.findall(r'data-csrf-token="([^"]+)"', page)
    # The page set the cookie its token belongs to.
    assert client.cookies[settings.CSRF_COOKIE_NAME].value and token
    settings_json = re.search(r'data-settings="([^"]+)"', page)
    assert settings_json is not None and "&quot;validatorUrl&quot;: null" in settings_json.group(1)


def test_the_csp_allows_our_scripts_only() -> None:
    csp = Client().get(SWAGGER)["Content-Security-Policy"]
    script_src = re.search(r"script-src ([^;]+)", csp)
    assert script_src is not None and script_src.group(1).strip() == "'self'", csp
    assert "connect-src 'self'" in csp


def test_redoc_and_swagger_ui_link_to_each_other() -> None:
    assert f'href="{SWAGGER}"' in Client().get("/api/docs/").content.decode()
    assert 'href="/api/docs/"' in Client().get(SWAGGER).content.decode()
