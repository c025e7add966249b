"""The runner's real client against the real internal listener: one uvicorn process
serving kionga.internal_asgi (as the Procfile starts it) on a free loopback port,
driven by runner.http_resources.HttpResources. Proves both sides of the contract in
runner/resources.py agree, over real HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User

from approvals.actions import do_decide
from approvals.models import ApprovalRequest
from kionga.models import Membership, Project
from kionga.resource_models import (
    Dataset,
    DatasetObject,
    KnowledgeBase,
    KnowledgeDocument,
    ModelEndpoint,
)
from runner.http_resources import HttpResources
from runner.resources import ResourceError
from runs.credentials import revoke_credential
from runs.models import Run
from tests.internal_helpers import chat_answer, start_run, upstream
from tests.internal_listener import internal_listener

# Committed data: the listener is another process with its own connection.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def base(django_db_setup: None) -> Iterator[str]:
    # One process for the module: starting uvicorn and Django takes a second or two.
    with internal_listener() as url:
        yield url


def as_runner(base_url: str, credential: str,
              use: Callable[[HttpResources], Awaitable[Any]]) -> Any:
    """Run one coroutine with a fresh HttpResources (no ORM inside: it is async)."""

    async def go() -> Any:
        client = HttpResources(base_url, credential, timeout=20)
        try:
            return await use(client)
        finally:
            await client.aclose()

    return asyncio.run(go())


def denied(base_url: str, credential: str) -> str:
    try:
        as_runner(base_url, credential, lambda c: c.read_object("prices", "greeting"))
    except ResourceError as error:
        return error.code
    return "allowed"


def seed(project: Project, model_url: str) -> None:
    ModelEndpoint.objects.create(project=project, key="gpt", base_url=model_url,
                                 model_name="tiny", secret="sk-live-test-0123456789abcdef")
    kb = KnowledgeBase.objects.create(project=project, key="faq", name="FAQ")
    KnowledgeDocument.objects.create(knowledge_base=kb, title="Refunds",
                                     text="Refunds are paid within 14 days.")
    KnowledgeDocument.objects.create(knowledge_base=kb, title="Shipping", text="Free shipping.")
    dataset = Dataset._default_manager.create(project=project, key="prices")
    DatasetObject.objects.create(dataset=dataset, key="greeting", value="Hello from storage")


def test_it_serves_the_runners_client(
    base: str, carol: User, alice: User, acme: Project
) -> None:
    with upstream(lambda *_: chat_answer("Hi from the model", prompt=5, completion=4)) as (
        model_url, seen
    ):
        seed(acme, model_url)
        run, credential = start_run(carol, acme)

        predicted = as_runner(base, credential, lambda c: c.predict(
            "gpt", [{"role": "user", "content": "hello"}]))
        assert predicted == {"text": "Hi from the model",
                             "usage": {"tokens": 9, "cost": 0.0}}
        assert seen[0]["headers"]["authorization"] == "Bearer sk-live-test-0123456789abcdef"
        run.refresh_from_db()
        assert run.tokens == 9

        found = as_runner(base, credential, lambda c: c.search_knowledge("faq", "refund", 3))
        assert [d["metadata"]["title"] for d in found["documents"]] == ["Refunds"]

        stored = as_runner(base, credential, lambda c: c.read_object("prices", "greeting"))
        assert stored == {"key": "greeting", "text": "Hello from storage",
                          "content_type": "text/plain"}

        created = as_runner(base, credential, lambda c: c.create_approval(
            "ask", "Refund 40 EUR?", "refund", 60))
        assert created["status"] == "pending"
        approval_id = created["id"]
        polled = as_runner(base, credential, lambda c: c.get_approval(approval_id))
        assert (polled["id"], polled["status"]) == (approval_id, "pending")
        do_decide(alice, ApprovalRequest.objects.get(pk=approval_id), "reject", "too much")
        decided = as_runner(base, credential, lambda c: c.get_approval(approval_id))
        assert (decided["status"], decided["comment"]) == ("rejected", "too much")


def test_it_denies_the_runner_once_the_grant_or_the_run_ends(
    base: str, carol: User, acme: Project
) -> None:
    seed(acme, "http://127.0.0.1:9")
    run, credential = start_run(carol, acme)
    assert denied(base, credential) == "allowed"
    # Missing IDs come back as the runner's resource_denied, like lost grants.
    with pytest.raises(ResourceError) as missing:
        as_runner(base, credential, lambda c: c.read_object("nowhere", "k"))
    assert missing.value.code == "resource_denied"

    Membership.objects.filter(user=carol, project=acme).update(role="viewer")
    assert denied(base, credential) == "resource_denied"
    Membership.objects.filter(user=carol, project=acme).update(role="editor")
    assert denied(base, credential) == "allowed"

    Run.objects.filter(pk=run.pk).update(status="completed")
    assert denied(base, credential) == "resource_denied"

    other_run, other = start_run(carol, acme)
    revoke_credential(other_run)
    assert denied(base, other) == "resource_denied"


def test_it_serves_nothing_else(base: str) -> None:
    root = base.removesuffix("/api/v1")
    assert httpx.get(f"{base}/me").status_code == 404
    assert httpx.get(f"{root}/admin/").status_code == 404
    assert httpx.get(f"{base}/agent-designs").status_code == 404
