"""A real OpenID Connect provider on loopback for the sign-in tests: django-oauth-toolkit's
(tests/oidc_provider/) as its own process, and a person's way through it.

``provider`` (module-scoped) starts it with a fresh database and RSA key; the test plays
the company's identity admin with ``provider.person(...)`` and ``provider.client(...)``.
``through_provider`` walks a sign-in the way a browser would, with httpx for the
provider's pages and Django's test client for the product's.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from django.test import Client, override_settings

from kionga import oidc
from kionga.sign_in import forget_failures
from tests.internal_listener import free_port, wait_until_up

ROOT = Path(__file__).resolve().parent.parent
CLIENT_ID = "kionga-tests"
CLIENT_SECRET = "kionga-tests-client-secret-0123456789"
# Where the product's test client lives (Django's test client's host).
TEST_CLIENT_CALLBACK = "http://testserver/oidc/callback/"


@dataclass
class Provider:
    base: str
    control_secret: str

    @property
    def issuer(self) -> str:
        return f"{self.base}/o"

    def _control(self, what: str, body: dict[str, Any]) -> None:
        answer = httpx.post(f"{self.base}/control/{what}", json=body, timeout=10,
                            headers={"Authorization": f"Bearer {self.control_secret}"})
        answer.raise_for_status()

    def person(self, username: str, **fields: Any) -> None:
        """Create or change one person at the provider: password, email, email_verified,
        groups, active, delete."""
        self._control("user", {"username": username, **fields})

    def client(self, redirect_uris: list[str]) -> None:
        """Register the product as the provider's client with these callback URLs."""
        self._control("client", {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
                                 "redirect_uris": redirect_uris})

    def product_env(self) -> dict[str, str]:
        """The product's configuration for this provider (its environment variables)."""
        return {"KIONGA_OIDC_ISSUER": self.issuer, "KIONGA_OIDC_CLIENT_ID": CLIENT_ID,
                "KIONGA_OIDC_CLIENT_SECRET": CLIENT_SECRET,
                "KIONGA_OIDC_PROVIDER_NAME": "Example Corp",
                "KIONGA_OIDC_SCOPES": "openid email profile groups"}


@contextmanager
def provider_process() -> Iterator[Provider]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    port, control = free_port(), secrets.token_urlsafe(16)
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryFile() as log:
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.oidc_provider.settings",
               "PROVIDER_DATABASE": str(Path(folder) / "provider.sqlite3"),
               "PROVIDER_RSA_KEY": pem, "PROVIDER_CONTROL": control}
        process = subprocess.Popen([sys.executable, "-m", "tests.oidc_provider", str(port)],
                                   cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            wait_until_up(f"{base}/o/.well-known/openid-configuration", process, log,
                          "the OIDC provider", seconds=60)
            yield Provider(base, control)
        finally:
            process.terminate()
            process.wait(timeout=10)


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    with provider_process() as started:
        started.client([TEST_CLIENT_CALLBACK])
        yield started


# Django's test client's address: the sign-ins of these tests come from it.
TEST_CLIENT_ADDRESS = "127.0.0.1"


@pytest.fixture
def product_uses(provider: Provider) -> Iterator[Provider]:
    """The product (this process's settings) configured for the provider; the failed
    sign-ins counted for the test client's address (in Redis, which outlives a test's
    database) forgotten before and after, so refusals never slow another test down."""
    forget_failures(TEST_CLIENT_ADDRESS)
    env = provider.product_env()
    with override_settings(KIONGA_OIDC_ISSUER=env["KIONGA_OIDC_ISSUER"],
                           OIDC_RP_CLIENT_ID=CLIENT_ID, OIDC_RP_CLIENT_SECRET=CLIENT_SECRET,
                           KIONGA_OIDC_PROVIDER_NAME=env["KIONGA_OIDC_PROVIDER_NAME"],
                           OIDC_RP_SCOPES=env["KIONGA_OIDC_SCOPES"]):
        oidc.forget_discovery()
        yield provider
    oidc.forget_discovery()
    forget_failures(TEST_CLIENT_ADDRESS)


_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def through_provider(client: Client, username: str, password: str,
                     next_path: str = "") -> Any:
    """Click "Sign in with ..." on the product, sign in at the provider, and come back:
    the product's answer to the callback (a redirect on success and on refusal)."""
    start = client.get("/oidc/authenticate/" + (f"?next={next_path}" if next_path else ""))
    assert start.status_code == 302, start.content
    with httpx.Client(timeout=10) as browser:
        page = browser.get(start["Location"], follow_redirects=True)
        form = _CSRF.search(page.text)
        if form is not None:  # the provider's sign-in form (no session there yet)
            page = browser.post(str(page.url), follow_redirects=False, data={
                "csrfmiddlewaretoken": form.group(1), "username": username,
                "password": password, "next": page.url.params.get("next", "")})
            if page.status_code == 200:
                raise ProviderRefused(page.text)
            page = browser.get(urljoin(str(page.url), page.headers["Location"]))
        assert page.status_code == 302, page.text
        back = page.headers["Location"]
    assert back.startswith(TEST_CLIENT_CALLBACK), back
    return client.get(back.removeprefix("http://testserver"))


class ProviderRefused(Exception):
    """The provider itself refused the person (its sign-in form came back)."""
