"""Project notices: what changed in a project, told live to the pages that show it.

A notice is small JSON on the project's channel (django-eventstream): its `kind` and
the IDs of what changed, never a secret or a run's output. It only says "refetch":
the approver inbox, the canvas and the admin's runs list read the API again when one
arrives, so a missed notice costs nothing (they poll slowly as well, and refetch when
their stream reconnects).

Apps send them with ``send_notice`` where the fact is settled; it publishes once the
transaction commits. Publishing goes through Redis pub/sub (``EVENTSTREAM_REDIS``), so
a notice sent by the events ingester or a Celery worker reaches the listeners of every
gateway process. People listen on ``GET /api/v1/projects/{id}/notices``
(kionga.projects.notice_views), authorized by ``ProjectChannels`` with the project
access checks: another tenant's project is a 404 as on every route.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from functools import partial
from typing import Any, Final, Literal

from django.db import connection, transaction
from django.urls import reverse
from django_eventstream import eventstream, send_event
from django_eventstream.channelmanager import ChannelManagerBase
from django_eventstream.views import RedisListener, get_listener_manager
from redis import RedisError
from redis.backoff import ExponentialBackoff
from redis.retry import Retry
from rest_framework.exceptions import APIException

from kionga.access import AnyUser, check_project_access, projects_of

logger = logging.getLogger(__name__)

NoticeKind = Literal[
    "approval.requested", "approval.decided", "approval.expired", "approval.cancelled",
    "run.started", "run.ended", "revision.saved",
]
# The SSE event type of every notice: EventSource's `onmessage` receives it.
EVENT_TYPE: Final = "message"
CHANNEL_PREFIX: Final = "project-"
# django-eventstream's pub/sub channel (its RedisListener subscribes to it).
PUBSUB_CHANNEL: Final = "events_channel"
RESUBSCRIBE_SECONDS: Final = 1.0

Id = str | int | uuid.UUID


# Sending: one quick retry, not redis-py's default of three over seconds, so a Redis
# outage does not hold up the request or batch that settled the fact (the notice is
# dropped; pages poll). django-eventstream's sending client is its module's.
if eventstream.redis_client is not None:
    eventstream.redis_client.set_retry(Retry(ExponentialBackoff(cap=0.1, base=0.05), 1))


def channel_of(project_id: int) -> str:
    return f"{CHANNEL_PREFIX}{project_id}"


def project_of(channel: str) -> int | None:
    """The project ID a channel name names; None for any other name."""
    rest = channel.removeprefix(CHANNEL_PREFIX)
    if rest == channel or not (rest.isascii() and rest.isdigit()) or len(rest) > 18:
        return None
    return int(rest)


# A page follows at most this many projects, one stream each (a browser opens at most six
# connections to a host over HTTP/1.1); it polls as well, for the others.
PAGE_STREAMS: Final = 3


def notice_urls(user: AnyUser) -> str:
    """The notice routes of the projects a page follows for `user`, space-separated."""
    found = projects_of(user).order_by("pk").values_list("pk", flat=True)[:PAGE_STREAMS]
    return " ".join(reverse("project-notices", kwargs={"project_id": pk}) for pk in found)


def notice(kind: NoticeKind, **ids: Id | None) -> dict[str, Any]:
    """The notice's JSON: its kind and the IDs given (as strings), nothing else."""
    return {"kind": kind, **{k: v if isinstance(v, int) else str(v)
                             for k, v in ids.items() if v is not None}}


def send_notice(project_id: int, kind: NoticeKind, **ids: Id | None) -> None:
    """Tell the project's listeners once the current transaction commits (at once
    outside one); nothing if it rolls back."""
    send_notices([(project_id, notice(kind, **ids))])


def send_notices(notices: list[tuple[int, dict[str, Any]]]) -> None:
    """Several notices (project ID, notice()), published together once the current
    transaction commits: one Redis round trip for all of them (the ingester ends and
    starts runs by the batch; a PUBLISH each was a fifth of its CPU)."""
    if notices:
        transaction.on_commit(partial(publish_all, notices))


def publish(project_id: int, data: dict[str, Any]) -> None:
    """Publish now. Redis away: logged and dropped, as the pages poll as well."""
    publish_all([(project_id, data)])


def publish_all(notices: list[tuple[int, dict[str, Any]]]) -> None:
    """Publish now, in one pipeline: the message django-eventstream's send_event
    publishes for a channel without a stored log (its pub/sub listeners read it in
    every gateway process). Redis away: logged and dropped, as the pages poll as well."""
    client = eventstream.redis_client
    try:
        if client is None:  # no Redis configured: the library's local delivery
            for project_id, data in notices:
                send_event(channel_of(project_id), EVENT_TYPE, data)
            return
        pipe = client.pipeline(transaction=False)
        for project_id, data in notices:
            pipe.publish(PUBSUB_CHANNEL, json.dumps({
                "channel": channel_of(project_id), "event_type": EVENT_TYPE,
                "data": json.dumps(data), "pub_id": None}))
        pipe.execute()
    except (RedisError, OSError) as exc:
        logger.warning("%d notices (%s) not sent: %s", len(notices),
                       ", ".join(sorted({str(data.get("kind")) for _p, data in notices})),
                       type(exc).__name__)


class ResilientRedisListener(RedisListener):  # type: ignore[misc]
    """django-eventstream's subscriber to the notices of every process, subscribing
    again when Redis went away (the library's own stops for good on the first error).
    Notices published in between are lost: the pages poll as well."""

    async def start(self) -> None:
        while True:
            try:
                await self.listen()
            except (RedisError, OSError) as exc:
                logger.warning("notices: the Redis subscription broke (%s); subscribing "
                               "again", type(exc).__name__)
            await asyncio.sleep(RESUBSCRIBE_SECONDS)
            self.pubsub = self.redis_client.pubsub()


def install_resilient_listener() -> None:
    """In a process that serves notice streams, before the first one opens."""
    manager = get_listener_manager()
    if isinstance(manager.redis_listener, RedisListener) and not isinstance(
            manager.redis_listener, ResilientRedisListener):
        manager.redis_listener = ResilientRedisListener()


class ProjectChannels(ChannelManagerBase):  # type: ignore[misc]
    """django-eventstream's channel manager (EVENTSTREAM_CHANNELMANAGER_CLASS): one
    channel per project, readable by its members (any role) as its API routes are."""

    def get_channels_for_request(self, request: Any, view_kwargs: dict[str, Any]) -> set[str]:
        # Only the route's own project: never channels named in the query string.
        return {view_kwargs["channel"]} if "channel" in view_kwargs else set()

    def can_read_channel(self, user: AnyUser | None, channel: str) -> bool:
        project_id = project_of(channel)
        if user is None or project_id is None:
            return False
        try:
            check_project_access(user, project_id)
        except APIException:
            return False
        finally:
            # The stream may last hours: its database connection goes back at once.
            if not connection.in_atomic_block:
                connection.close()
        return True

    def is_channel_reliable(self, channel: str) -> bool:
        # No stored log: a notice only says "refetch", and pages refetch on reconnect.
        return False
