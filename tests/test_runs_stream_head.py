"""A HEAD of an event stream answers the headers an open would (or its refusal) and
takes no place in the stream budget (runs.stream_limits): as many HEADs as a person
has places, each on a connection kept open, and their GET is still served. Nor does
any other method open a stream (OPTIONS, safe from CSRF, did). Over the real public
listener; a request with a bearer token and one with a cookie alike."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import httpx
import pytest
from django.contrib.auth.models import User

from kionga.models import Project
from kionga.tokens import issue_token
from tests.public_gateway import public_gateway
from tests.runs_helpers import running_events_url

# Committed data: the gateway is another process with its own connection.
pytestmark = pytest.mark.django_db(transaction=True)

PER_USER = 2
SSE = {"Accept": "text/event-stream"}
# With and without a cookie beside the token: the same answers.
PATHS: tuple[dict[str, str], ...] = ({}, {"Cookie": "theme=dark"})


@pytest.fixture(scope="module")
def gateway(django_db_setup: None) -> Iterator[str]:
    with public_gateway(KIONGA_MAX_STREAMS_PER_USER=str(PER_USER)) as base:
        yield base


def test_a_head_of_a_stream_takes_no_place(gateway: str, alice: User, bob: User,
                                           acme: Project) -> None:
    url = running_events_url(alice, acme)
    auth = {"Authorization": f"Bearer {issue_token(bob, 'sse')}"}
    with ExitStack() as held:
        for path in PATHS * PER_USER:  # each on a connection of its own, kept open
            client = held.enter_context(httpx.Client(base_url=gateway, timeout=10.0,
                                                     headers=auth))
            head = client.head(url, headers={**SSE, **path})
            assert head.status_code == 200, head.headers
            assert head.headers["content-type"].startswith("text/event-stream")
            assert head.headers["cache-control"] == "no-cache"
            assert head.content == b""
        client = held.enter_context(httpx.Client(base_url=gateway, timeout=10.0,
                                                 headers=auth))
        follow = client.send(client.build_request("GET", url, headers=SSE), stream=True)
        held.callback(follow.close)
        assert follow.status_code == 200, follow.read()
        assert next(follow.iter_lines()).startswith("retry:")


def test_a_head_is_refused_as_its_open_would_be(gateway: str, alice: User, mallory: User,
                                                acme: Project) -> None:
    url = gateway + running_events_url(alice, acme)
    stranger = {"Authorization": f"Bearer {issue_token(mallory, 'sse')}", **SSE}
    for path in PATHS:
        head = httpx.head(url, headers={**stranger, **path}, timeout=10.0)
        get = httpx.get(url, headers={**stranger, **path}, timeout=10.0)
        assert head.status_code == get.status_code == 404
        assert head.headers["content-type"] == get.headers["content-type"]


def test_other_methods_open_no_stream(gateway: str, alice: User, bob: User,
                                      acme: Project) -> None:
    url = running_events_url(alice, acme)
    auth = {"Authorization": f"Bearer {issue_token(bob, 'sse')}"}
    with ExitStack() as held:
        for path in PATHS * PER_USER:
            client = held.enter_context(httpx.Client(base_url=gateway, timeout=10.0,
                                                     headers=auth))
            options = client.options(url, headers={**SSE, **path})
            assert options.headers["content-type"] == "application/json", options.headers
            assert options.status_code in (405, 406), options.text
        client = held.enter_context(httpx.Client(base_url=gateway, timeout=10.0,
                                                 headers=auth))
        follow = client.send(client.build_request("GET", url, headers=SSE), stream=True)
        held.callback(follow.close)
        assert follow.status_code == 200, follow.read()
