"""A canary secret set through the API never comes back: not in any answer, audit
entry, log line or admin page."""

from __future__ import annotations

import logging

import pytest
from django.contrib.auth.models import User
from django.test import Client

from kionga.models import AuditEvent, Project
from kionga.resource_models import ApiConnection, Function, ModelEndpoint
from tests.conftest import Api
from tests.projects_helpers import resources_url

CANARY = "canary-7f3e9a1c-secret"


@pytest.mark.allow_output  # DEBUG logging of every library on: their lines are checked
def test_the_canary_never_comes_back(api: Api, acme: Project, alice: User, bob: User,
                                     staff: Client, caplog: pytest.LogCaptureFixture,
                                     capfd: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.DEBUG)
    admin, viewer = api.client_for(alice), api.client_for(bob)
    answers = [
        admin.post(resources_url(acme, "model"), {
            "id": "gpt", "base_url": "https://llm.example.com/v1", "model_name": "m",
            "secret": CANARY}, format="json"),
        admin.post(resources_url(acme, "function"), {
            "id": "hook", "url": "https://hooks.example.com/", "secret": CANARY},
            format="json"),
        admin.post(resources_url(acme, "connection"), {
            "id": "crm", "base_url": "https://crm.example.com/",
            "secret_headers": {"Authorization": f"Bearer {CANARY}"}}, format="json"),
        admin.patch(resources_url(acme, "model") + "/gpt", {"secret": CANARY + "-2"},
                    format="json"),
        admin.patch(resources_url(acme, "connection") + "/crm",
                    {"secret_headers": {"X-Key": CANARY, "Bad\nName": CANARY}}, format="json"),
        admin.patch(resources_url(acme, "function") + "/hook", {"secret": CANARY * 30},
                    format="json"),
        viewer.get(resources_url(acme)),
        viewer.get(resources_url(acme, "model") + "/gpt"),
        viewer.get(resources_url(acme, "connection") + "/crm"),
        admin.get(resources_url(acme, "function") + "/hook"),
        admin.delete(resources_url(acme, "function") + "/hook"),
    ]
    assert [a.status_code for a in answers] == [201, 201, 201, 200, 400, 400, 200, 200, 200,
                                                 200, 204]
    assert ModelEndpoint.objects.get().secret == CANARY + "-2"  # stored, just never shown
    assert ApiConnection.objects.get().secret_headers == {"Authorization": f"Bearer {CANARY}"}
    assert not Function.objects.exists()
    for answer in answers:
        assert CANARY not in answer.content.decode()
    for event in AuditEvent.objects.all():
        assert CANARY not in str(event.to_dict())
    assert AuditEvent.objects.filter(action__startswith="resource.").count() == 5
    pages = ["/admin/kionga/modelendpoint/", "/admin/kionga/apiconnection/",
             "/admin/kionga/auditevent/",
             f"/admin/kionga/modelendpoint/{ModelEndpoint.objects.get().pk}/change/",
             f"/admin/kionga/apiconnection/{ApiConnection.objects.get().pk}/change/"]
    for page in pages:
        shown = staff.get(page)
        assert shown.status_code == 200, page
        assert CANARY not in shown.content.decode(), page
    for record in caplog.records:
        assert CANARY not in record.getMessage() and CANARY not in str(record.args)
    printed = capfd.readouterr()  # every log line the handlers wrote, too
    assert CANARY not in printed.out + printed.err
