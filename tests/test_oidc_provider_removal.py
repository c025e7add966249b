"""A person removed or disabled at the identity provider has no way back in at their
next sign-in: the provider (a real one on loopback) refuses them, so the product signs
nobody in, and their session through the provider ends after KIONGA_OIDC_SESSION_HOURS
at the latest. Accounts made by the provider have no password to fall back on."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.oidc_peer import Provider, ProviderRefused, through_provider
from tests.sign_in_helpers import clean_addresses  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("clean_addresses")]


@pytest.mark.allow_output  # django-axes logs the refused local password
@pytest.mark.parametrize("removal", [{"active": False}, {"delete": True}],
                         ids=["disabled", "deleted"])
def test_removed_at_the_provider_means_no_access_at_the_next_sign_in(
        product_uses: Provider, removal: dict[str, bool]) -> None:
    product_uses.person("lee", password="lee-corp-pw", email="lee@example.com")
    first = Client()
    through_provider(first, "lee", "lee-corp-pw")
    assert first.get("/designer/").status_code == 200
    lee = User.objects.get(email="lee@example.com")

    product_uses.person("lee", **removal)
    again = Client()
    with pytest.raises(ProviderRefused):
        through_provider(again, "lee", "lee-corp-pw")
    assert again.get("/designer/").status_code == 302  # to the sign-in
    # Nor a local way round it: the account the provider made has no password.
    assert not lee.has_usable_password()
    assert again.post("/", {"username": lee.username, "password": "lee-corp-pw"}) \
        .status_code == 200  # the form again
    assert again.get("/designer/").status_code == 302
