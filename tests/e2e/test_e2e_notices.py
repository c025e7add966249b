"""Project notices on the live stack: an EventSource-like client on the real gateway.

alice follows her project's channel and hears what other processes settle: the
internal listener (approval.requested), the gateway (approval.decided, revision.saved)
and the event ingester (run.started, run.ended), each through Redis pub/sub. mallory
is refused alice's channel as any route refuses another tenant's object (404)."""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from designs.starter_templates import TEMPLATES
from kionga.models import Membership, Project
from tests.conftest import Api
from tests.e2e.conftest import Http
from tests.e2e.helpers import approval_graph, wait_for
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)
ACCEPT = {"Accept": "text/event-stream"}


class NoticeStream:
    """Reads `GET …/notices` as a browser's EventSource does, in a thread of its own."""

    def __init__(self, stack: Stack, token: str, project_id: int) -> None:
        self.notices: queue.Queue[dict[str, Any]] = queue.Queue()
        self.opened = threading.Event()
        self.status: int | None = None
        self.comments: list[str] = []
        self.ended = threading.Event()
        self.client = httpx.Client(base_url=stack.base_url, timeout=httpx.Timeout(5, read=60),
                                   headers={"Authorization": f"Bearer {token}", **ACCEPT})
        self.url = f"/api/v1/projects/{project_id}/notices"
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        assert self.opened.wait(10), "the stream did not open"

    def _read(self) -> None:
        try:
            with self.client.stream("GET", self.url) as response:
                self.status = response.status_code
                self.content_type = response.headers.get("content-type", "")
                kind, data = "message", ""
                for line in response.iter_lines():
                    if line.startswith(":") and line.strip(": "):
                        self.comments.append(line)
                    elif line.startswith("event:"):
                        kind = line[6:].strip()
                    elif line.startswith("data:"):
                        data += line[5:].strip()
                    elif line == "":
                        if kind == "stream-open":
                            self.opened.set()
                        elif kind == "message" and data:
                            self.notices.put(json.loads(data))
                        kind, data = "message", ""
        except httpx.HTTPError:
            pass
        finally:
            self.opened.set()
            self.ended.set()

    def wait(self, kind: str, key: str, value: object, timeout: float = 30) -> dict[str, Any]:
        """The first notice of `kind` about `key` = `value` (others are skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"no {kind} notice about {key}={value}"
            try:
                found = self.notices.get(timeout=left)
            except queue.Empty:
                continue
            if found["kind"] == kind and str(found.get(key)) == str(value):
                return found

    def close(self) -> None:
        self.client.close()


def subscription_broke(stack: Stack, since: int) -> bool:
    """Whether the gateway logged, past byte `since` of its log, that its notices
    subscription broke (kionga.notices.ResilientRedisListener)."""
    with (stack.log_dir / "gateway.log").open("rb") as log:
        log.seek(since)
        return b"notices: the Redis subscription broke" in log.read()


@pytest.fixture
def alice_stream(stack: Stack, api: Api, alice: Any, acme: Project) -> Iterator[NoticeStream]:
    stream = NoticeStream(stack, api.token_for(alice), acme.pk)
    assert stream.status == 200 and stream.content_type.startswith("text/event-stream")
    yield stream
    stream.close()


def test_alice_hears_what_other_processes_settle(stack: Stack, api: Api, alice: Any,
                                                 carol: Any, acme: Project,
                                                 alice_stream: NoticeStream) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, approval_graph())
    run_id = http.start(design_id, input="one two").json()["id"]
    # The events ingester stores run.started; the internal listener stores the request.
    started = alice_stream.wait("run.started", "run_id", run_id)
    assert started == {"kind": "run.started", "run_id": run_id, "design_id": design_id}
    asked = alice_stream.wait("approval.requested", "run_id", run_id)
    assert set(asked) == {"kind", "approval_id", "run_id"}
    # carol decides through the gateway; the ingester ends the run.
    decided = Http(stack, api.token_for(carol)).client.post(
        f"/api/v1/agent-approvals/{asked['approval_id']}/decision",
        json={"decision": "approve"})
    assert decided.status_code == 200, decided.text
    assert alice_stream.wait("approval.decided", "approval_id", asked["approval_id"]) == {
        "kind": "approval.decided", "approval_id": asked["approval_id"], "run_id": run_id,
        "status": "approved"}
    ended = alice_stream.wait("run.ended", "run_id", run_id)
    assert ended["status"] == "completed"
    # No notice carries the run's input or output.
    assert "one two" not in json.dumps([started, asked, ended])


def test_a_saved_revision_names_its_number_and_author(stack: Stack, api: Api, alice: Any,
                                                      acme: Project,
                                                      alice_stream: NoticeStream) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, TEMPLATES[0]["graph"])
    saved = http.client.put(f"/api/v1/agent-designs/{design_id}",
                            json={"revision": 1, "graph": TEMPLATES[0]["graph"]})
    assert saved.status_code == 200, saved.text
    assert alice_stream.wait("revision.saved", "design_id", design_id) == {
        "kind": "revision.saved", "design_id": design_id, "revision": 2, "by": "alice",
        "by_user_id": alice.pk}


def test_mallory_is_refused_alices_channel(stack: Stack, api: Api, mallory: Any,
                                           acme: Project) -> None:
    client = Http(stack, api.token_for(mallory)).client
    refused = client.get(f"/api/v1/projects/{acme.pk}/notices", headers=ACCEPT)
    assert refused.status_code == 404, refused.text
    assert refused.json()["error"]["code"] == "not_found"
    assert client.get("/api/v1/projects/x/notices", headers=ACCEPT).status_code == 404
    anonymous = httpx.get(f"{stack.base_url}/api/v1/projects/{acme.pk}/notices",
                          headers=ACCEPT)
    assert anonymous.status_code == 401


def test_a_viewer_hears_too_and_a_run_elsewhere_is_not_told(
        stack: Stack, api: Api, bob: Any, mallory: Any, evil: Project, acme: Project) -> None:
    stream = NoticeStream(stack, api.token_for(bob), acme.pk)
    try:
        assert stream.status == 200
        http = Http(stack, api.token_for(mallory))
        design_id = http.create_design(evil.pk, TEMPLATES[2]["graph"])
        run_id = http.start(design_id, input="hello").json()["id"]
        wait_for(lambda: http.run(design_id, run_id)["status"] == "completed",
                 message="mallory's run did not complete")
        time.sleep(0.5)
        heard = []
        while not stream.notices.empty():
            heard.append(stream.notices.get())
        assert all(n.get("run_id") != run_id for n in heard), heard
    finally:
        stream.close()


def test_notices_come_again_after_redis_was_away(stack: Stack, api: Api, alice: Any,
                                                acme: Project,
                                                alice_stream: NoticeStream) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, TEMPLATES[0]["graph"])
    # Away until redis-py gave up retrying the subscription's connection and the gateway
    # logged that its subscription broke (4-6 s here; a fixed 15 s wait before): there
    # django-eventstream's own subscriber would have stopped for good.
    logged = (stack.log_dir / "gateway.log").stat().st_size
    process = stack.processes.pop("redis")
    process.terminate()
    process.wait()
    wait_for(lambda: subscription_broke(stack, logged), timeout=30)
    stack.start_redis()
    # The gateway subscribes again (kionga.notices.ResilientRedisListener); the open
    # stream stays open. A revision saved once it has: the notice arrives.
    deadline = time.monotonic() + 20
    revision = 1
    while True:
        saved = http.client.put(f"/api/v1/agent-designs/{design_id}",
                                json={"revision": revision, "graph": TEMPLATES[0]["graph"]})
        assert saved.status_code == 200, saved.text
        revision += 1
        try:
            alice_stream.wait("revision.saved", "revision", revision, timeout=1.5)
            break
        except AssertionError:
            assert time.monotonic() < deadline, "no notice after Redis restarted"


def test_a_member_removed_hears_no_more(stack: Stack, api: Api, alice: Any, bob: Any,
                                        acme: Project) -> None:
    stream = NoticeStream(stack, api.token_for(bob), acme.pk)
    try:
        http = Http(stack, api.token_for(alice))
        design_id = http.create_design(acme.pk, TEMPLATES[0]["graph"])
        Membership.objects.filter(project=acme, user=bob).delete()
        time.sleep(1.5)  # the stack re-checks streams every second
        saved = http.client.put(f"/api/v1/agent-designs/{design_id}",
                                json={"revision": 1, "graph": TEMPLATES[0]["graph"]})
        assert saved.status_code == 200, saved.text
        assert stream.ended.wait(10), "the stream did not end"
        assert stream.comments == [": closed not_found: Project not found."]
        assert stream.notices.empty()  # the notice that ended it was not passed on
    finally:
        stream.close()
