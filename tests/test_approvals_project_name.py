"""Every approval request names its project: the API's list entries, a request and a
decision's answer carry `project_name`, and the approver pages show it above each
request's message (someone in several projects must see which one asks)."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from approvals.models import ApprovalRequest
from kionga.models import Membership, Project, Role
from tests.approvals_helpers import pending, waiting_run
from tests.conftest import Api

pytestmark = pytest.mark.django_db

PROJECT_LINE = re.compile(r'<p class="request-project">Project <strong>([^<]*)</strong></p>')


@pytest.fixture
def two_requests(alice: User, acme: Project, evil: Project) -> dict[str, ApprovalRequest]:
    Membership.objects.create(project=evil, user=alice, role=Role.EDITOR)
    return {"Acme": pending(waiting_run(alice, acme)),
            "Evil Corp": pending(waiting_run(alice, evil))}


def test_the_api_names_each_requests_project(api: Api, alice: User,
                                             two_requests: dict[str, ApprovalRequest]) -> None:
    client = api.client_for(alice)
    listed = client.get("/api/v1/agent-approvals").json()["approvals"]
    assert {a["id"]: a["project_name"] for a in listed} == {
        str(r.pk): name for name, r in two_requests.items()}
    for name, request in two_requests.items():
        url = f"/api/v1/agent-approvals/{request.pk}"
        assert client.get(url).json()["project_name"] == name
    decided = client.post(f"/api/v1/agent-approvals/{two_requests['Acme'].pk}/decision",
                          {"decision": "approve", "comment": ""}, format="json")
    assert decided.status_code == 200, decided.content
    assert decided.json()["project_name"] == "Acme"


def test_each_card_and_page_shows_its_project_first(
        alice: User, two_requests: dict[str, ApprovalRequest]) -> None:
    client = Client()
    client.force_login(alice)
    html = client.get("/approvals/").content.decode()
    cards = html.split('<li class="request">')[1:]
    assert len(cards) == 2
    for card in cards:
        named = PROJECT_LINE.search(card)
        assert named is not None, card
        request = two_requests[named.group(1)]
        # The project line comes before the request's message.
        assert named.start() < card.index(f'id="request-{request.pk}"')
    for name, request in two_requests.items():
        page = client.get(f"/approvals/{request.pk}/").content.decode()
        named = PROJECT_LINE.search(page)
        assert named is not None and named.group(1) == name
        assert named.start() < page.index("<h1>")
