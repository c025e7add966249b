"""Inviting tells a project admin nothing about who has an account: a person's username
or email, a name nobody has, an inactive person and an email several people share get
the same status, headers and body (apart from the invitation's random ID, its times and
the name echoed back), after the same SQL statements; nobody accepts an invitation that
named nobody."""

from __future__ import annotations

import re
import uuid
from typing import Any

from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from kionga.models import Invitation, Membership, Project
from tests.conftest import Api, make_member
from tests.projects_helpers import accept, members_url

# (typed, who it names)
TYPED = [
    ("charlie", "a person's username"),
    ("Charlie@Example.COM", "a person's email, in other case"),
    ("nobody", "no one's username"),
    ("nobody@example.com", "no one's email"),
    ("gone", "an inactive person"),
    ("shared@example.com", "an email two people share"),
]
TIMES = re.compile(rb'"(created_at|expires_at)":"[^"]+"')
# Values (NULL: no invitee) and savepoint names.
LITERALS = re.compile(r"'(?:[^']|'')*'|\b\d+\b|\bNULL\b|\"s\d+_x\d+\"")


def _people(charlie: User) -> None:
    charlie.email = "charlie@example.com"
    charlie.save()
    gone: Any = make_member("gone", None)
    gone.is_active = False
    gone.save()
    for name in ("dave", "erin"):
        shared = make_member(name, None)
        shared.email = "shared@example.com"
        shared.save()


def _masked(body: bytes, typed: str, invitation_id: str) -> bytes:
    body = body.replace(invitation_id.encode(), b"<id>")
    body = body.replace(f'"user":"{typed.lower() if "@" in typed else typed}"'.encode(),
                        b'"user":"<typed>"')
    return TIMES.sub(rb'"\1":"<time>"', body)


def _statements(queries: list[dict[str, Any]]) -> list[str]:
    """The SQL run, with its values (names, IDs, times) and savepoint names masked."""
    return [LITERALS.sub("?", query["sql"]) for query in queries]


def test_known_and_unknown_people_get_the_same_answer(api: Api, acme: Project, alice: User,
                                                      charlie: User) -> None:
    _people(charlie)
    admin = api.client_for(alice)
    admin.get(members_url(acme))  # the token's first use is recorded before we compare
    answers = []
    for typed, who in TYPED:
        with CaptureQueriesContext(connection) as queries:
            answer = admin.post(members_url(acme), {"user": typed, "role": "editor"},
                                format="json")
        assert answer.status_code == 202, (who, answer.content)
        invitation_id = answer.json()["id"]
        assert uuid.UUID(invitation_id).version == 4, who
        headers = sorted((k, v) for k, v in answer.headers.items()
                         if k not in ("Date", "Content-Length"))  # the name is echoed
        answers.append((who, headers, _masked(answer.content, typed, invitation_id),
                        _statements(queries.captured_queries)))
    first = answers[0]
    for other in answers[1:]:
        assert other[1:] == first[1:], (first[0], other[0])
    assert Invitation.objects.filter(project=acme).count() == len(TYPED)
    listed = admin.get(f"/api/v1/projects/{acme.pk}/invitations").json()["invitations"]
    assert {(i["status"], i["role"]) for i in listed} == {("pending", "editor")}


def test_only_the_person_named_can_accept(api: Api, acme: Project, alice: User,
                                          charlie: User) -> None:
    _people(charlie)
    admin = api.client_for(alice)
    ids = {typed: admin.post(members_url(acme), {"user": typed, "role": "viewer"},
                             format="json").json()["id"] for typed, _ in TYPED}
    person = api.client_for(charlie)
    assert sorted(i["id"] for i in person.get("/api/v1/me/invitations").json()[
        "invitations"]) == sorted([ids["charlie"], ids["Charlie@Example.COM"]])
    for name in ("gone", "dave", "erin"):
        user = User.objects.get(username=name)
        user.is_active = True
        user.save()
        client = api.client_for(user)
        assert client.get("/api/v1/me/invitations").json()["invitations"] == []
        for typed, _ in TYPED:
            api.assert_error(accept(client, ids[typed]), 404, "not_found")
    assert accept(person, ids["charlie"]).status_code == 200
    assert list(Membership.objects.filter(project=acme).exclude(user=alice)
                .values_list("user__username", flat=True)) == ["charlie"]
