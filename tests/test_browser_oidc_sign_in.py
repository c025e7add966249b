"""A person signs in through the company's OpenID Connect provider in a real browser
(headless Chromium, Playwright): the designer's sign-in offers "Sign in with Example
Corp", the provider (django-oauth-toolkit's, on loopback) asks for the corporate
password, and the person lands on the designer, signed in, a member of the project their
group maps to. The gateway is its own process (uvicorn), configured from the
environment as in production. Screenshots: tests/artifacts/oidc-*.png."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, expect

from kionga.models import Membership, Project, Role
from tests.e2e.browser.conftest import ARTIFACTS, launched_browser
from tests.oidc_peer import TEST_CLIENT_CALLBACK, Provider
from tests.public_gateway import public_gateway

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    # This module's own: Playwright's loop must not outlive it (launched_browser).
    with launched_browser() as launched:
        yield launched


@pytest.fixture
def gateway(provider: Provider, django_db_setup: None) -> Iterator[str]:
    with public_gateway(**provider.product_env(), KIONGA_SERVE_STATIC="1",
                        KIONGA_OIDC_GROUP_ROLES="eng=acme:editor") as base:
        provider.client([TEST_CLIENT_CALLBACK, f"{base}/oidc/callback/"])
        yield base


def test_sign_in_through_the_provider_lands_on_the_designer(
        browser: Browser, provider: Provider, gateway: str) -> None:
    Project.objects.create(slug="acme", name="Acme")
    provider.person("nora", password="nora-corp-pw", email="nora@example.com",
                    groups=["eng"])
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        page.goto(f"{gateway}/designer/")
        expect(page).to_have_url(re.compile(r"/designer/login/\?next=/designer/$"))
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "oidc-sign-in-page.png"))
        page.get_by_role("link", name="Sign in with Example Corp").click()

        expect(page).to_have_url(re.compile(re.escape(provider.base) + "/accounts/login/"))
        page.get_by_label("Corporate user name").fill("nora")
        page.get_by_label("Corporate password").fill("nora-corp-pw")
        page.get_by_role("button", name="Continue").click()

        expect(page).to_have_url(f"{gateway}/designer/")
        expect(page.get_by_text("Signed in as nora@example.com")).to_be_visible()
        # Editor of Acme through the group: it is offered for a new design.
        project = page.get_by_role("combobox", name="Project")
        expect(project.locator("option", has_text="Acme")).to_have_count(1)
        page.screenshot(path=str(ARTIFACTS / "oidc-designer.png"), full_page=True)
    finally:
        context.close()
    nora = User.objects.get(email="nora@example.com")
    assert Membership.objects.get(user=nora).role == Role.EDITOR
