"""Deployment hygiene: the production settings of docs/operations.md pass `check --deploy` with no
warning; no "*" host by default; HSTS and a CSP on HTML pages; the API docs load
their JavaScript from our static files. (Sign-in lockouts:
tests/test_platform_sign_in_lockout.py.)"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from django.test import Client

ROOT = Path(settings.BASE_DIR)


def production_env() -> dict[str, str]:
    """The variables of docs/operations.md's production block, placeholders filled in."""
    operations = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n# production settings\n(.*?)```", operations, re.S)
    assert block, "docs/operations.md has no production settings block"
    env: dict[str, str] = {}
    for line in block.group(1).splitlines():
        if "=" in line and not line.startswith("#"):
            name, value = line.split("=", 1)
            env[name.strip()] = secrets.token_urlsafe(50) if value.startswith("<") else value
    return env


def deploy_check(extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
    env.update(extra)
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )


def test_the_documented_production_settings_pass_the_deploy_check() -> None:
    env = production_env()
    for needed in ("DJANGO_ALLOWED_HOSTS", "DJANGO_HSTS_SECONDS",
                   "DJANGO_SECURE_PROXY_SSL_HEADER", "DJANGO_SECURE_COOKIES"):
        assert needed in env, needed
    ok = deploy_check(env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "no issues" in ok.stdout
    without_hsts = deploy_check({k: v for k, v in env.items() if k != "DJANGO_HSTS_SECONDS"})
    assert without_hsts.returncode != 0 and "W004" in without_hsts.stderr + without_hsts.stdout


def test_no_host_is_served_by_default() -> None:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOWED_HOSTS"}
    code = "import django; django.setup(); from django.conf import settings; " \
           "print(settings.ALLOWED_HOSTS)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=60,
                         env={**env, "DJANGO_SETTINGS_MODULE": "kionga.settings"})
    assert out.returncode == 0, out.stderr
    assert "*" not in out.stdout and "127.0.0.1" in out.stdout


@pytest.mark.django_db
@pytest.mark.allow_output  # Django logs the refused host
def test_it_refuses_unknown_hosts() -> None:
    assert Client().get("/healthz", HTTP_HOST="evil.example").status_code == 400


@pytest.mark.django_db
def test_html_pages_send_hsts_and_a_csp(settings: Any) -> None:
    settings.SECURE_HSTS_SECONDS = 3600
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    client = Client()
    for path in ("/admin/login/", "/api/docs/"):
        response = client.get(path, HTTP_X_FORWARDED_PROTO="https")
        assert response.status_code == 200, path
        assert response["Strict-Transport-Security"].startswith("max-age=3600"), path
        csp = response["Content-Security-Policy"]
        assert "script-src 'self'" in csp and "default-src 'self'" in csp, csp
        assert "frame-ancestors 'none'" in csp
    plain = client.get("/admin/login/")
    assert "Strict-Transport-Security" not in plain  # only over HTTPS


@pytest.mark.django_db
def test_the_api_docs_load_only_our_own_static_files() -> None:
    page = Client().get("/api/docs/").content.decode()
    assert "http://" not in page and "https://" not in page, page
    assert "<script>" not in page  # no inline script: the CSP would block it
    [src] = re.findall(r'<script src="([^"]+)"', page)
    assert src.startswith("/" + settings.STATIC_URL.strip("/") + "/"), src
    assert finders.find(src.split(settings.STATIC_URL.strip("/") + "/", 1)[1]), src
