"""The approver UI shows a signed-in person the invitations made out to them, above their
requests, and accepts or declines each with one button (CSRF-protected); someone else's
invitation is a 404 page and nothing changes."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from kionga.models import Invitation, Membership, Project, Role
from tests.conftest import Api
from tests.projects_helpers import invite

pytestmark = pytest.mark.django_db


def signed_in(user: User) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def _list_page(client: Client) -> str:
    response = client.get("/approvals/")
    assert response.status_code == 200
    return response.content.decode()


def _answer(client: Client, invitation_id: str, answer: str) -> tuple[int, str]:
    html = _list_page(client)
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
    assert found is not None
    response = client.post(f"/approvals/invitations/{invitation_id}",
                           {"csrfmiddlewaretoken": found.group(1), "answer": answer})
    if response.status_code != 302:
        return response.status_code, response.content.decode()
    assert response["Location"] == "/approvals/"
    return 302, _list_page(client)


def test_a_person_accepts_an_invitation_in_the_approver_ui(api: Api, acme: Project,
                                                           alice: User, charlie: User) -> None:
    invited = invite(api.client_for(alice), acme, "charlie", "editor")
    person = signed_in(charlie)
    html = _list_page(person)
    assert '<strong class="invitation-project">Acme</strong>' in html
    assert f'action="/approvals/invitations/{invited["id"]}"' in html
    status, html = _answer(person, invited["id"], "accept")
    assert status == 302 and "You joined Acme as editor." in html
    assert Membership.objects.get(project=acme, user=charlie).role == Role.EDITOR
    assert "invitation-project" not in html
    status, html = _answer(person, invited["id"], "accept")  # a second click
    assert status == 302 and "Nothing changed: This invitation is accepted." in html


@pytest.mark.allow_output  # Django logs the refused CSRF check
def test_a_person_declines_and_nobody_else_answers(api: Api, acme: Project, alice: User,
                                                   charlie: User, mallory: User) -> None:
    invited = invite(api.client_for(alice), acme, "charlie", "admin")
    thief = signed_in(mallory)
    assert "invitation-project" not in _list_page(thief)
    status, _ = _answer(thief, invited["id"], "accept")
    assert status == 404
    status, _ = _answer(signed_in(charlie), invited["id"], "maybe")
    assert status == 400
    assert Invitation.objects.get(pk=invited["id"]).status == Invitation.Status.PENDING
    status, html = _answer(signed_in(charlie), invited["id"], "decline")
    assert status == 302 and "Invitation declined." in html
    assert not Membership.objects.filter(project=acme, user__in=[charlie, mallory]).exists()
    forged = Client(enforce_csrf_checks=True)
    forged.force_login(charlie)
    assert forged.post(f"/approvals/invitations/{invited['id']}",
                       {"answer": "accept"}).status_code == 403  # no CSRF token
