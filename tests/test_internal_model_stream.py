"""A Kionga model ID streams like the platform backend, and an upstream's failure goes
through the node's retry policy: the engine with the runner's real client, the real
internal listener (uvicorn) and an OpenAI-compatible peer on loopback (tests/openai_peer)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User

from kionga.models import Project
from kionga.resource_models import ModelEndpoint
from tests.internal_helpers import start_run
from tests.internal_listener import internal_listener
from tests.model_run_kit import of, run_models
from tests.openai_peer import OpenAIPeer

# Committed data: the listener is another process with its own connection.
pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.allow_output]  # upstream failures are logged

TEXT = "one two three four five six seven eight"


@pytest.fixture(scope="module")
def base(django_db_setup: None) -> Iterator[str]:
    with internal_listener() as url:
        yield url


@pytest.fixture
def peer() -> Iterator[OpenAIPeer]:
    with OpenAIPeer(text=TEXT, chunks=8, latency=0.4).serving() as served:
        yield served


Events = list[dict[str, Any]]


def model_run(base: str, peer: OpenAIPeer, carol: User, acme: Project) -> Events:
    ModelEndpoint.objects.create(project=acme, key="gpt", base_url=peer.url, model_name="m",
                                 secret="sk-stream-test-0123456789abcdef")
    _, credential = start_run(carol, acme)
    return asyncio.run(run_models(base, credential))


def completed(run: Events) -> dict[str, Any]:
    [event] = of(run, "node.completed", "m1")
    return event


def test_a_kionga_model_streams_deltas_end_to_end(
    base: str, peer: OpenAIPeer, carol: User, acme: Project
) -> None:
    run = model_run(base, peer, carol, acme)
    assert run[-1]["type"] == "run.completed", run[-1]
    pieces = [event["delta"] for event in of(run, "node.delta", "m1")]
    assert len(pieces) >= 4, pieces  # piece by piece as the peer wrote, not one answer
    assert "".join(pieces) == TEXT == completed(run)["text"]
    assert completed(run)["usage"] == {"tokens": 3 + len(TEXT.split())}
    assert peer.bodies[-1]["stream"] is True


FAULTS = ["429", "429-retry-after", "500", "503", "reset", "cut"]


@pytest.mark.parametrize("fault", FAULTS)
def test_an_upstream_failure_is_retried_by_the_node(
    base: str, peer: OpenAIPeer, carol: User, acme: Project, fault: str
) -> None:
    peer.fail(fault)
    run = model_run(base, peer, carol, acme)
    [retrying] = of(run, "node.retrying", "m1")
    assert retrying["error"]["code"] == "resource_unavailable", retrying
    assert run[-1]["type"] == "run.completed", run[-1]
    assert completed(run)["text"] == TEXT
    # The second attempt streamed the whole answer.
    again = [event["delta"] for event in of(run, "node.delta", "m1") if event["attempt"] == 2]
    assert "".join(again) == TEXT


@pytest.mark.parametrize("fault", FAULTS)
def test_an_upstream_that_keeps_failing_ends_the_run_with_a_clear_code(
    base: str, peer: OpenAIPeer, carol: User, acme: Project, fault: str
) -> None:
    peer.fail(fault, fault)  # the model node tries twice (retries: 1)
    run = model_run(base, peer, carol, acme)
    assert len(of(run, "node.retrying")) == 1
    end = run[-1]
    assert end["type"] == "run.failed", end
    assert end["error"]["code"] == "resource_unavailable", end
    assert "Model 'gpt'" in end["error"]["message"], end
    assert "sk-stream-test" not in str(run)
