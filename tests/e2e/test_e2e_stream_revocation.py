"""A long event stream ends once its caller may no longer read the run (runs.stream_access):
its token revoked for the project or wholly (through a token it was made from), or its
session's person removed from the project. The stream re-checks every
KIONGA_STREAM_RECHECK_SECONDS (1 s on the end-to-end stack), keeps flowing while access
remains, and ends with a comment naming the refusal. For the events route and for the
streamed start, with or without a cookie beside the token."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import pytest
from django.conf import settings
from django.test import Client

from kionga.models import ApiToken
from tests.conftest import Api
from tests.e2e.conftest import Http
from tests.e2e.helpers import approval_graph
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)

SSE = {"Accept": "text/event-stream"}
PATHS = {"token": {}, "token and a cookie": {"Cookie": "theme=dark"}}
# How long a stream may outlive its access: the interval, plus room for a busy machine.
ENDS_WITHIN = 1 + 4.0


class Follower:
    """One stream, read to its end in a thread of its own."""

    def __init__(self, stack: Stack, headers: dict[str, str], method: str, url: str,
                 **kwargs: Any) -> None:
        self.lines: list[str] = []
        self.status: int | None = None
        self.ended = threading.Event()
        client = httpx.Client(base_url=stack.base_url, timeout=60.0, headers=headers)
        self._thread = threading.Thread(target=self._read, args=(client, method, url, kwargs),
                                        daemon=True)
        self._thread.start()

    def _read(self, client: httpx.Client, method: str, url: str, kwargs: Any) -> None:
        try:
            with client, client.stream(method, url, **kwargs) as answer:
                self.status = answer.status_code
                for line in answer.iter_lines():
                    self.lines.append(line)
        finally:
            self.ended.set()

    def wait_for(self, line: str, seconds: float = 30.0) -> None:
        deadline = time.monotonic() + seconds
        while line not in self.lines:
            assert not self.ended.is_set(), (self.status, self.lines)
            assert time.monotonic() < deadline, self.lines
            time.sleep(0.05)

    def keeps_flowing(self, seconds: float = 3.0) -> None:
        """Still open after several re-checks: access remains, the stream goes on."""
        assert not self.ended.wait(seconds), self.lines

    def ends_with_refusal(self, code: str) -> None:
        since = time.monotonic()
        assert self.ended.wait(ENDS_WITHIN), "the stream outlived its access"
        assert time.monotonic() - since <= ENDS_WITHIN
        last = [line for line in self.lines if line][-1]
        assert last.startswith(f": closed {code}: "), self.lines


def waiting_run(admin: Http, acme: Any) -> tuple[str, str]:
    """(design ID, run ID) of a run waiting on a person: its stream stays open."""
    design_id = admin.create_design(acme.pk, approval_graph())
    started = admin.start(design_id, input="hi")
    assert started.status_code == 201, started.text
    return design_id, started.json()["id"]


def revoke_for_project(admin: Http, acme: Any, raw: str) -> None:
    token_id = ApiToken.objects.get(prefix=raw[:8]).pk
    assert admin.client.delete(f"/api/v1/projects/{acme.pk}/tokens/{token_id}").status_code == 204


@pytest.mark.parametrize("path", PATHS)
def test_a_token_revoked_for_the_project_ends_its_event_stream(
        stack: Stack, api: Api, alice: Any, carol: Any, acme: Any, path: str) -> None:
    admin = Http(stack, api.token_for(alice))
    design_id, run_id = waiting_run(admin, acme)
    raw = api.token_for(carol)
    follower = Follower(stack, {"Authorization": f"Bearer {raw}", **SSE, **PATHS[path]}, "GET",
                        f"/api/v1/agent-designs/{design_id}/runs/{run_id}/events")
    follower.wait_for("event: approval.requested")
    follower.keeps_flowing()
    revoke_for_project(admin, acme, raw)
    follower.ends_with_refusal("not_found")
    assert follower.status == 200


@pytest.mark.parametrize("path", PATHS)
def test_a_token_revoked_for_the_project_ends_the_stream_of_the_run_it_started(
        stack: Stack, api: Api, alice: Any, carol: Any, acme: Any, path: str) -> None:
    admin = Http(stack, api.token_for(alice))
    design_id = admin.create_design(acme.pk, approval_graph())
    raw = api.token_for(carol)
    follower = Follower(stack, {"Authorization": f"Bearer {raw}", **SSE, **PATHS[path]},
                        "POST", f"/api/v1/agent-designs/{design_id}/runs",
                        json={"input": "hi"})
    follower.wait_for("event: approval.requested")
    follower.keeps_flowing()
    revoke_for_project(admin, acme, raw)
    follower.ends_with_refusal("not_found")
    assert follower.status == 201


def test_revoking_the_token_a_token_was_made_from_ends_its_stream(
        stack: Stack, api: Api, alice: Any, carol: Any, acme: Any) -> None:
    admin = Http(stack, api.token_for(alice))
    design_id, run_id = waiting_run(admin, acme)
    parent_raw = api.token_for(carol)
    parent = Http(stack, parent_raw)
    made = parent.client.post("/api/v1/me/tokens", json={"name": "child"})
    assert made.status_code == 201, made.text
    follower = Follower(stack, {"Authorization": f"Bearer {made.json()['token']}", **SSE},
                        "GET", f"/api/v1/agent-designs/{design_id}/runs/{run_id}/events")
    follower.wait_for("event: approval.requested")
    follower.keeps_flowing()
    parent_id = ApiToken.objects.get(prefix=parent_raw[:8]).pk
    assert parent.client.delete(f"/api/v1/me/tokens/{parent_id}").status_code == 204
    follower.ends_with_refusal("invalid_token")


def test_a_member_removed_ends_their_session_stream(stack: Stack, api: Api, alice: Any,
                                                     bob: Any, acme: Any) -> None:
    admin = Http(stack, api.token_for(alice))
    design_id, run_id = waiting_run(admin, acme)
    browser = Client()
    browser.force_login(bob)  # a session in the database the stack reads
    session = browser.cookies[settings.SESSION_COOKIE_NAME].value
    follower = Follower(stack, {"Cookie": f"{settings.SESSION_COOKIE_NAME}={session}", **SSE},
                        "GET", f"/api/v1/agent-designs/{design_id}/runs/{run_id}/events")
    follower.wait_for("event: approval.requested")
    follower.keeps_flowing()
    assert admin.client.delete(f"/api/v1/projects/{acme.pk}/members/{bob.pk}").status_code == 204
    follower.ends_with_refusal("not_found")
