"""Project notices (kionga.notices): who may follow a project's channel, what a notice
holds, and that the apps send one once the fact is committed (not before, not on a
rollback). Streams over a real gateway: tests/e2e/test_e2e_notices.py."""

from __future__ import annotations

import json
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import pytest
import redis
from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django_eventstream import eventstream

from approvals.actions import NewApproval, do_decide, do_request_approval, expire_overdue
from designs.actions import do_save_revision
from kionga.models import Project, TokenRevocation
from kionga.notices import (
    ProjectChannels,
    channel_of,
    notice,
    project_of,
    publish,
    send_notice,
)
from kionga.tokens import find_token, find_user_by_token
from runs.lifecycle import do_finish_runs
from runs.models import Run
from tests.conftest import Api
from tests.designs_helpers import assistant_graph, make_design
from tests.ingest_helpers import make_run

pytestmark = pytest.mark.django_db
NOTICES = "/api/v1/projects/{}/notices"
STREAM = "text/event-stream"


class Listener:
    """A subscriber of django-eventstream's Redis pub/sub, as each gateway process is."""

    def __init__(self) -> None:
        self.pubsub = redis.Redis(**settings.EVENTSTREAM_REDIS).pubsub()
        self.pubsub.subscribe("events_channel")
        self.heard: list[tuple[str, dict[str, Any]]] = []

    def notices(self, project: Project, key: str, value: object) -> list[dict[str, Any]]:
        """What was published on `project`'s channel about `key` = `value` (the Redis is
        shared with other test sessions: only this test's IDs count)."""
        while (message := self.pubsub.get_message(timeout=0.2)) is not None:
            if message["type"] != "message":
                continue  # the subscription's confirmation
            body = json.loads(message["data"])
            self.heard.append((body["channel"], json.loads(body["data"])))
        return [data for channel, data in self.heard
                if channel == channel_of(project.pk) and data.get(key) == str(value)]


Committing = Callable[[], AbstractContextManager[Any]]


@pytest.fixture
def committed(django_capture_on_commit_callbacks: Any) -> Committing:
    """A block whose end counts as the commit (the test's own transaction never commits)."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def listener() -> Iterator[Listener]:
    found = Listener()
    yield found
    found.pubsub.close()


def test_a_channel_names_one_project() -> None:
    assert channel_of(7) == "project-7" and project_of("project-7") == 7
    for other in ("project-", "project-x", "project-1.0", "runs-7", "project-" + "9" * 19,
                  "project-\u0663"):  # an Arabic-Indic 3: a digit, not ours
        assert project_of(other) is None


def test_members_of_any_role_may_read_the_channel(alice: User, bob: User, mallory: User,
                                                  acme: Project, evil: Project) -> None:
    channels = ProjectChannels()
    assert channels.can_read_channel(alice, channel_of(acme.pk))
    assert channels.can_read_channel(bob, channel_of(acme.pk))  # a viewer
    assert not channels.can_read_channel(mallory, channel_of(acme.pk))
    assert channels.can_read_channel(mallory, channel_of(evil.pk))
    assert not channels.can_read_channel(None, channel_of(acme.pk))  # anonymous
    assert not channels.can_read_channel(alice, "project-x")
    assert not channels.is_channel_reliable(channel_of(acme.pk))


def test_a_token_the_project_revoked_may_not_read_it(api: Api, alice: User,
                                                     acme: Project) -> None:
    raw = api.token_for(alice)
    holder = find_user_by_token(raw)
    assert holder is not None and ProjectChannels().can_read_channel(holder, channel_of(acme.pk))
    token = find_token(raw)
    assert token is not None
    TokenRevocation.objects.create(token=token, project=acme)
    again = find_user_by_token(raw)
    assert again is not None and not ProjectChannels().can_read_channel(again,
                                                                        channel_of(acme.pk))


def test_the_route_refuses_like_the_api(api: Api, alice: User, mallory: User,
                                        acme: Project) -> None:
    url = NOTICES.format(acme.pk)
    api.assert_error(api.anon().get(url, HTTP_ACCEPT=STREAM), 401, "not_authenticated")
    api.assert_error(api.client_for(mallory).get(url, HTTP_ACCEPT=STREAM), 404, "not_found")
    api.assert_error(api.client_for(alice).get(NOTICES.format(999999), HTTP_ACCEPT=STREAM), 404,
                     "not_found")
    # Only a stream: JSON (or anything else) is not what this route answers.
    api.assert_error(api.client_for(alice).get(url), 406, "not_acceptable")
    api.assert_error(api.client_for(alice).post(url, HTTP_ACCEPT=STREAM), 405, "method_not_allowed")


def test_a_notice_holds_its_kind_and_ids_only() -> None:
    assert notice("run.ended", run_id="r", design_id=None, status="failed") == {
        "kind": "run.ended", "run_id": "r", "status": "failed"}
    assert notice("revision.saved", revision=3) == {"kind": "revision.saved", "revision": 3}


def test_it_is_published_after_the_commit_and_never_on_a_rollback(
        listener: Listener, acme: Project, committed: Committing) -> None:
    kept, dropped = uuid.uuid4(), uuid.uuid4()
    with committed():
        send_notice(acme.pk, "run.started", run_id=kept)
        with pytest.raises(RuntimeError), transaction.atomic():
            send_notice(acme.pk, "run.started", run_id=dropped)
            raise RuntimeError
        assert listener.notices(acme, "run_id", kept) == []  # not before the commit
    assert listener.notices(acme, "run_id", kept) == [{"kind": "run.started",
                                                       "run_id": str(kept)}]
    assert listener.notices(acme, "run_id", dropped) == []


def test_runs_and_approvals_tell_their_project(listener: Listener, alice: User, carol: User,
                                               acme: Project, committed: Committing) -> None:
    run = make_run(alice, acme, status="waiting")
    with committed():
        approval = do_request_approval(run, NewApproval("ask", "Send?", "", 60))
        do_decide(carol, approval, "approve")
        other = do_request_approval(run, NewApproval("ask", "Again?", "", 60))
        type(other).objects.filter(pk=other.pk).update(expires_at=other.created_at)
        expire_overdue()
        run.status = "completed"
        do_finish_runs([run])

    assert listener.notices(acme, "run_id", run.pk) == [
        {"kind": "approval.requested", "approval_id": str(approval.pk), "run_id": str(run.pk)},
        {"kind": "approval.decided", "approval_id": str(approval.pk), "run_id": str(run.pk),
         "status": "approved"},
        {"kind": "approval.requested", "approval_id": str(other.pk), "run_id": str(run.pk)},
        {"kind": "approval.expired", "approval_id": str(other.pk), "run_id": str(run.pk)},
        {"kind": "run.ended", "run_id": str(run.pk), "design_id": str(run.design_id),
         "status": "completed"},
    ]


def test_a_saved_revision_tells_its_number_and_who(listener: Listener, alice: User,
                                                   acme: Project, committed: Committing) -> None:
    design = make_design(alice, acme)
    with committed():
        do_save_revision(alice, design, 1, assistant_graph(), None, None)
    assert listener.notices(acme, "design_id", design.pk) == [
        {"kind": "revision.saved", "design_id": str(design.pk), "revision": 2, "by": "alice",
         "by_user_id": alice.pk}]


def test_a_run_of_another_project_is_not_told_here(
        listener: Listener, mallory: User, acme: Project, evil: Project,
        committed: Committing) -> None:
    run: Run = make_run(mallory, evil, status="running")
    run.status = "failed"
    with committed():
        do_finish_runs([run])
    assert listener.notices(acme, "run_id", run.pk) == []
    assert [n["kind"] for n in listener.notices(evil, "run_id", run.pk)] == ["run.ended"]


@pytest.mark.allow_output  # the warning it logs
def test_redis_away_drops_the_notice_at_once(acme: Project, caplog: Any,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    sender = eventstream.redis_client
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setattr(sender, "connection_pool", redis.ConnectionPool(
        host="127.0.0.1", port=port, retry=sender.get_retry()))
    started = time.monotonic()
    publish(acme.pk, notice("run.ended", run_id="r"))  # no exception
    assert time.monotonic() - started < 1  # redis-py's default retries take seconds
    assert "1 notices (run.ended) not sent" in caplog.text


class CountingRedis(redis.Redis):
    """django-eventstream's sending client, counting its round trips to Redis."""

    round_trips = 0

    def execute_command(self, *args: Any, **options: Any) -> Any:
        CountingRedis.round_trips += 1
        return super().execute_command(*args, **options)

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Any:
        pipe = super().pipeline(transaction, shard_hint)
        execute = pipe.execute

        def counted(raise_on_error: bool = True) -> Any:
            CountingRedis.round_trips += 1
            return execute(raise_on_error)

        pipe.execute = counted  # type: ignore[method-assign]
        return pipe


def test_the_ingesters_batch_of_notices_goes_in_one_round_trip(
        listener: Listener, alice: User, acme: Project, evil: Project, committed: Committing,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from runs.lifecycle import tell_started

    monkeypatch.setattr(eventstream, "redis_client",
                        CountingRedis(**settings.EVENTSTREAM_REDIS))
    CountingRedis.round_trips = 0
    runs = [make_run(alice, project, status="completed") for project in (acme, evil, acme)]
    with committed():
        do_finish_runs(runs)
    assert CountingRedis.round_trips == 1
    with committed():
        tell_started(runs)
    assert CountingRedis.round_trips == 2
    for run in runs:
        project = acme if run.project_id == acme.pk else evil
        assert listener.notices(project, "run_id", run.pk) == [
            {"kind": "run.ended", "run_id": str(run.pk), "design_id": str(run.design_id),
             "status": "completed"},
            {"kind": "run.started", "run_id": str(run.pk), "design_id": str(run.design_id)}]

