"""The real internal listener (uvicorn) keeps its connections to a model's upstream
open between calls, per project: a project's predicts, streamed or not, go over one
connection; another project's over its own. The upstream is a keep-alive HTTP/1.1 peer
on loopback that counts the connections it accepts (tests/keepalive_peer)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from django.contrib.auth.models import User

from kionga.models import Project
from kionga.resource_models import ModelEndpoint
from tests.internal_helpers import start_run
from tests.internal_listener import internal_listener
from tests.keepalive_peer import KeepAlivePeer

# Committed data: the listener is another process with its own connection.
pytestmark = pytest.mark.django_db(transaction=True)

MESSAGES = {"messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture(scope="module")
def base(django_db_setup: None) -> Iterator[str]:
    with internal_listener() as url:
        yield url


def predict(base: str, credential: str, stream: bool = False) -> str:
    headers = {"Authorization": f"Bearer {credential}"}
    if stream:
        headers["Accept"] = "text/event-stream, application/json"  # as the runner asks
    answer = httpx.post(f"{base}/models/gpt/predict", json=MESSAGES, headers=headers,
                        timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.text


def test_a_projects_calls_reuse_its_connection_and_no_other_project_does(
        base: str, carol: User, acme: Project, evil: Project, mallory: User) -> None:
    with KeepAlivePeer().serving() as peer:
        credentials = []
        for user, project in ((carol, acme), (mallory, evil)):
            ModelEndpoint.objects.create(project=project, key="gpt", base_url=peer.url,
                                         model_name="m", secret="sk-0123456789abcdef")
            credentials.append(start_run(user, project)[1])
        ours, theirs = credentials
        assert '"hi"' in predict(base, ours)
        assert "event: done" in predict(base, ours, stream=True)
        assert '"hi"' in predict(base, ours)
        assert peer.accepted == 1
        predict(base, theirs)
        predict(base, theirs, stream=True)
        assert (peer.requests, peer.accepted) == (5, 2)
