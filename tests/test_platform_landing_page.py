"""The landing page at /: for a signed-in person, links to what they may open (the admin
only for ops staff) and a sign-out button (POST, CSRF-protected); for others, the
sign-in. The admin's "View site" and every product page's header lead back to it."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.designs_helpers import make_design


def signed_in(user: User, **kwargs: Any) -> Client:
    client = Client(**kwargs)
    client.force_login(user)
    return client


def links(html: str) -> set[str]:
    return set(re.findall(r'href="([^"]+)"', html))


def test_it_shows_the_sign_in_to_people_who_are_not_signed_in(db: None) -> None:
    response = Client().get("/")
    html = response.content.decode()
    assert response.status_code == 200
    assert '<form method="post" action="/"' in html and 'name="csrfmiddlewaretoken"' in html
    assert 'name="password"' in html and "/api/docs/" in links(html)
    assert "/designer/" not in links(html)


def test_it_links_a_signed_in_person_to_the_designer_approvals_and_docs(alice: User) -> None:
    response = signed_in(alice).get("/")
    html = response.content.decode()
    assert response.status_code == 200 and "Signed in as <strong>alice</strong>" in html
    assert {"/designer/", "/approvals/", "/api/docs/"} <= links(html)
    assert "/admin/" not in links(html)  # alice is no ops staff: the admin refuses her
    assert re.search(r'<form method="post" action="/sign-out">\s*<input type="hidden" '
                     r'name="csrfmiddlewaretoken"', html)


def test_it_links_ops_staff_to_the_admin_too(staff: Client) -> None:
    assert "/admin/" in links(staff.get("/").content.decode())


@pytest.mark.allow_output  # Django logs the refused POST
def test_sign_out_is_a_csrf_protected_post(alice: User) -> None:
    guarded = signed_in(alice, enforce_csrf_checks=True)
    assert guarded.post("/sign-out").status_code == 403  # no token: still signed in
    assert "Signed in as" in guarded.get("/").content.decode()
    assert guarded.get("/sign-out").status_code == 405
    client = signed_in(alice)
    response = client.post("/sign-out")
    assert (response.status_code, response["Location"]) == (302, "/")
    assert 'name="password"' in client.get("/").content.decode()


def test_a_signed_in_person_cannot_post_to_it(alice: User) -> None:
    assert signed_in(alice).post("/", {"username": "x"}).status_code == 405


def test_the_admins_view_site_leads_to_it(staff: Client) -> None:
    html = staff.get("/admin/").content.decode()
    assert re.search(r'<a href="/">View site</a>', html)


def test_the_approver_ui_links_back(alice: User, staff: Client) -> None:
    page = links(signed_in(alice).get("/approvals/").content.decode())
    assert {"/", "/designer/"} <= page and "/admin/" not in page
    assert {"/", "/designer/", "/admin/"} <= links(staff.get("/approvals/").content.decode())


def test_the_designer_page_gets_the_links_and_sign_out(alice: User, acme: Any,
                                                        staff: Client) -> None:
    design = make_design(alice, acme)
    for url in ("/designer/", f"/designer/designs/{design.pk}/"):
        html = signed_in(alice).get(url).content.decode()
        config = json.loads(html.split('type="application/json">')[1].split("</script>")[0])
        site = config["site"]
        assert (site["home"], site["sign_out"]) == ("/", "/sign-out")
        assert [link["url"] for link in site["links"]] == ["/designer/", "/approvals/",
                                                           "/api/docs/"]
    html = staff.get("/designer/").content.decode()
    assert '"url": "/admin/"' in html
