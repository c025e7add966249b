"""Resource admin pages: a secret left empty is kept, unless the URL moves to another
scheme, host or port; then it is cleared (audited), as through the API."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from kionga.models import AuditEvent, Project
from kionga.resource_models import ApiConnection, Function, ModelEndpoint

FORMS: list[tuple[str, Any, str, str, Any, dict[str, str]]] = [
    ("modelendpoint", ModelEndpoint, "base_url", "secret", "sk-old",
     {"model_name": "m", "price_prompt_per_1k": "0", "price_completion_per_1k": "0"}),
    ("function", Function, "url", "secret", "sk-old", {}),
    ("apiconnection", ApiConnection, "base_url", "secret_headers", {"X-Key": "sk-old"},
     {"allowed_methods": "[]", "allowed_paths": "[]", "new_secret_headers": ""}),
]


def change(staff: Client, acme: Project, page: str, model: Any, url_field: str,
           url: str, form: dict[str, str]) -> Any:
    obj = model.objects.get(key="k1")
    data = {"project": acme.pk, "key": "k1", "name": "", "description": "", url_field: url,
            **form}
    if "secret" in [f.name for f in model._meta.get_fields()]:
        data.setdefault("secret", "")
    response = staff.post(f"/admin/kionga/{page}/{obj.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    return model.objects.get(key="k1")


@pytest.mark.parametrize(("page", "model", "url_field", "secret_field", "secret", "form"),
                         FORMS)
def test_a_moved_url_clears_the_secret(staff: Client, acme: Project, page: str, model: Any,
                                       url_field: str, secret_field: str, secret: Any,
                                       form: dict[str, str]) -> None:
    model.objects.create(project=acme, key="k1", **{url_field: "https://a.example.com/v1",
                                                   secret_field: secret})
    kept = change(staff, acme, page, model, url_field, "https://a.example.com/v2", form)
    assert getattr(kept, secret_field) == secret
    moved = change(staff, acme, page, model, url_field, "https://b.example.com/v2", form)
    assert getattr(moved, secret_field) in ("", {})
    event = AuditEvent.objects.get(action="resource.secret_cleared", target_id="k1")
    assert event.details["fields"] == [secret_field] and event.details["via"] == "admin"


def test_a_secret_typed_with_the_move_is_kept(staff: Client, acme: Project) -> None:
    Function.objects.create(project=acme, key="k1", url="https://a.example.com/f",
                            secret="sk-old")
    moved = change(staff, acme, "function", Function, "url", "https://b.example.com/f",
                   {"secret": "sk-new"})
    assert moved.secret == "sk-new"
    assert not AuditEvent.objects.filter(action="resource.secret_cleared").exists()
