"""A knowledge base filled through the API is searched by a knowledge node of a real run
(uvicorn gateway, internal listener, Celery runner), right after the documents went in."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from kionga.models import Project
from kionga.tokens import issue_token
from tests.e2e.conftest import Http
from tests.e2e.helpers import wait_stored
from tests.stack import Stack
from tests.versions_helpers import linear

pytestmark = pytest.mark.django_db(transaction=True)


def test_documents_added_through_the_api_are_found_in_a_run(
        stack: Stack, acme: Project, alice: User) -> None:
    http = Http(stack, issue_token(alice, "e2e"))
    base = f"/api/v1/projects/{acme.pk}/resources/knowledge_base"
    assert http.client.post(base, json={"id": "faq", "name": "FAQ"}).status_code == 201
    for title, text in [("Refunds", "Refunds are paid within 14 days."),
                        ("Shipping", "Shipping is free over 50 euros.")]:
        added = http.client.post(f"{base}/faq/documents", json={"title": title, "text": text})
        assert added.status_code == 201, added.text
    graph = linear({"id": "kb", "kind": "knowledge",
                    "config": {"knowledge_base": "faq", "limit": "1"}})
    design_id = http.create_design(acme.pk, graph, "Helpdesk")
    started = http.start(design_id, input="refund")
    assert started.status_code == 201, started.text
    run = wait_stored(http, design_id, started.json()["id"], timeout=60)
    assert run["status"] == "completed", run["events"][-1]
    assert "Refunds are paid within 14 days." in str(run["output"])
    assert "Shipping" not in str(run["output"])
