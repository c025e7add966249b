"""While a followed run waits on a person, `kionga run` prints where that person decides:
the approver web UI's page of the request, under the gateway's URL. The link is the
route of approvals/web_urls.py, and signing in from it lands on the request's page."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.urls import reverse

from tests.conftest import Api
from tests.e2e.cli_kit import Kionga, graph_file
from tests.e2e.conftest import Http
from tests.e2e.helpers import approval_graph, wait_for
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def approve_each(approver: Http, count: int, decided: list[str]) -> threading.Thread:
    """A person who approves the next `count` pending requests as they come."""

    def decide() -> None:
        for _ in range(count):
            pending = wait_for(lambda: approver.client.get(
                "/api/v1/agent-approvals", params={"status": "pending"}).json()["approvals"])
            decided.append(pending[0]["id"])
            approver.client.post(f"/api/v1/agent-approvals/{pending[0]['id']}/decision",
                                 json={"decision": "approve", "comment": "fine"})

    thread = threading.Thread(target=decide, daemon=True)
    thread.start()
    return thread


def sign_in_from(link: str, username: str) -> httpx.Response:
    """Open `link` signed out, sign in where it sends you, and land where it leads."""
    with httpx.Client(follow_redirects=True, timeout=30.0) as browser:
        form = browser.get(link)
        assert "/approvals/sign-in/" in str(form.url)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
        assert token is not None
        return browser.post(str(form.url), data={
            "csrfmiddlewaretoken": token.group(1), "username": username,
            "password": f"{username}-password"}, headers={"Referer": str(form.url)})


def test_a_followed_run_links_the_approvers_page(stack: Stack, api: Api, alice: Any,
                                                 carol: Any, tmp_path: Path) -> None:
    kionga = Kionga(stack, api.token_for(alice))
    design_id = kionga("designs", "create", "--file",
                       graph_file(tmp_path, approval_graph()))["data"]["design_id"]
    decided: list[str] = []
    person = approve_each(Http(stack, api.token_for(carol)), 2, decided)
    out, said = kionga.human("run", design_id, "--input", "x")
    ran = kionga("run", design_id, "--input", "y")
    person.join(timeout=30)
    assert out.startswith("run ") and ": completed" in out
    assert ran["data"]["status"] == "completed"
    for approval_id, stderr in zip(decided, (said, kionga.stderr), strict=True):
        link = f"{stack.base_url}/approvals/{approval_id}/"
        assert f"waiting for a person to decide: {link}" in stderr
    assert link == stack.base_url + reverse("approver:detail", args=[decided[1]])
    page = sign_in_from(link, "carol")
    assert page.status_code == 200 and str(page.url) == link
    assert "Send it?" in page.text
