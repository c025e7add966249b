"""Ops staff see designs with revisions, validation issues and the pretty graph; no secrets."""

from typing import Any

from django.test import Client

from designs.actions import do_create_design
from kionga.resource_models import ApiConnection, ModelEndpoint
from tests.designs_helpers import assistant_graph


def test_it_shows_issues_and_the_graph_on_the_design_page(staff: Client, alice: Any,
                                                          acme: Any) -> None:
    graph = assistant_graph()
    graph["nodes"][1]["config"] = {}
    design = do_create_design(alice, acme, "Draft", "", graph)
    page = staff.get(f"/admin/designs/design/{design.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "missing_required_config" in html and "not runnable" in html
    assert "&quot;schema_version&quot;: 2" in html
    assert staff.get(f"/admin/designs/designrevision/{design.current().pk}/change/").status_code \
        == 200


def test_it_never_shows_resource_secrets(staff: Client, acme: Any) -> None:
    model = ModelEndpoint.objects.create(project=acme, key="gpt", base_url="http://x.test/v1",
                                         model_name="m", secret="sk-very-secret-value")
    conn = ApiConnection.objects.create(project=acme, key="crm", base_url="http://crm.test",
                                        secret_headers={"Authorization": "Bearer hidden-crm"})
    for url in (f"/admin/kionga/modelendpoint/{model.pk}/change/",
                f"/admin/kionga/apiconnection/{conn.pk}/change/",
                "/admin/kionga/modelendpoint/", "/admin/kionga/apiconnection/"):
        html = staff.get(url).content.decode()
        assert "sk-very-secret-value" not in html and "hidden-crm" not in html, url


def test_it_keeps_a_secret_when_the_field_is_left_empty(staff: Client, acme: Any) -> None:
    model = ModelEndpoint.objects.create(project=acme, key="gpt", base_url="http://x.test/v1",
                                         model_name="m", secret="sk-keep")
    response = staff.post(f"/admin/kionga/modelendpoint/{model.pk}/change/", {
        "project": acme.pk, "key": "gpt", "name": "", "base_url": "http://x.test/v1",
        "model_name": "m2", "secret": "", "price_prompt_per_1k": "0",
        "price_completion_per_1k": "0",
    })
    assert response.status_code == 302, response.content.decode()[:2000]
    model.refresh_from_db()
    assert (model.secret, model.model_name) == ("sk-keep", "m2")
