"""Resource admin pages: a URL typed without a scheme means https, on every resource."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client, override_settings

from kionga.resource_models import ApiConnection, Function, ModelEndpoint


@pytest.mark.parametrize(("page", "model", "field", "form"), [
    ("modelendpoint", ModelEndpoint, "base_url",
     {"model_name": "m", "secret": "", "price_prompt_per_1k": "0",
      "price_completion_per_1k": "0"}),
    ("function", Function, "url", {"secret": "", "description": ""}),
    ("apiconnection", ApiConnection, "base_url",
     {"allowed_methods": "[]", "new_secret_headers": ""}),
])
def test_a_url_without_a_scheme_means_https(staff: Client, acme: Any, page: str,
                                             model: Any, field: str,
                                             form: dict[str, str]) -> None:
    response = staff.post(f"/admin/kionga/{page}/add/", {
        "project": acme.pk, "key": "k1", "name": "", field: "api.example.com/v1", **form})
    assert response.status_code == 302, response.content.decode()[:3000]
    assert getattr(model.objects.get(key="k1"), field) == "https://api.example.com/v1"


@pytest.mark.parametrize(("page", "field", "form"), [
    ("modelendpoint", "base_url", {"model_name": "m", "secret": "", "price_prompt_per_1k": "0",
                                   "price_completion_per_1k": "0"}),
    ("function", "url", {"secret": ""}),
    ("apiconnection", "base_url", {"allowed_methods": "[]", "new_secret_headers": ""}),
])
def test_staff_urls_pass_the_egress_policy_too(staff: Client, acme: Any, page: str,
                                               field: str, form: dict[str, str]) -> None:
    # The same rule as project admins' API (kionga.egress.configured_url_refusal).
    with override_settings(KIONGA_EGRESS_ALLOW=[]):
        response = staff.post(f"/admin/kionga/{page}/add/", {
            "project": acme.pk, "key": "k1", "name": "", field: "http://169.254.169.254/x",
            **form})
    assert response.status_code == 200 and b"egress policy" in response.content
    assert not (ModelEndpoint.objects.exists() or Function.objects.exists()
                or ApiConnection.objects.exists())
