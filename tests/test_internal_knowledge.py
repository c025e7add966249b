"""GET knowledge-bases and POST knowledge-bases/{id}/search for a run's project."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from kionga.models import Project
from kionga.resource_models import KnowledgeBase, KnowledgeDocument
from tests.conftest import Api
from tests.internal_helpers import BASE, run_client, start_run

pytestmark = pytest.mark.urls("kionga.internal_urls")


def knowledge_base(project: Project, key: str, docs: list[tuple[str, str]]) -> KnowledgeBase:
    kb = KnowledgeBase.objects.create(project=project, key=key, name=key.title())
    for title, text in docs:
        KnowledgeDocument.objects.create(knowledge_base=kb, title=title, text=text)
    return kb


def search(credential: str, kb: str, query: object, limit: object = 5) -> Any:
    return run_client(credential).post(BASE + f"knowledge-bases/{kb}/search",
                                       {"query": query, "limit": limit})


def test_it_lists_the_runs_projects_knowledge_bases(
    carol: User, acme: Project, evil: Project
) -> None:
    knowledge_base(acme, "policies", [])
    knowledge_base(acme, "faq", [])
    knowledge_base(evil, "secrets", [])
    _, raw = start_run(carol, acme)
    response = run_client(raw).get(BASE + "knowledge-bases")
    assert response.status_code == 200
    assert response.json() == {"knowledge_bases": [{"id": "faq", "name": "Faq"},
                                                   {"id": "policies", "name": "Policies"}]}


def test_it_searches_with_full_text_ranking(carol: User, acme: Project) -> None:
    kb = knowledge_base(acme, "faq", [
        ("Refunds", "Refunds are paid within 14 days of a return."),
        ("Shipping", "We ship worldwide; shipping is free over 50 euros."),
        ("Refund exceptions", "Gift cards get no refund. Refunds of refunds are rare."),
    ])
    _, raw = start_run(carol, acme)
    response = search(raw, "faq", "refund")
    assert response.status_code == 200, response.content
    documents = response.json()["documents"]
    first, second = (d for d in kb.documents.order_by("id") if "efund" in d.title)
    assert [d["id"] for d in documents] == [str(second.pk), str(first.pk)]  # more hits first
    assert documents[0]["metadata"] == {"title": "Refund exceptions"}
    assert documents[0]["score"] >= documents[1]["score"] > 0
    assert documents[1]["text"] == "Refunds are paid within 14 days of a return."


def test_it_applies_the_limit(carol: User, acme: Project) -> None:
    knowledge_base(acme, "faq", [(f"Doc {i}", "the cat sat") for i in range(5)])
    _, raw = start_run(carol, acme)
    assert len(search(raw, "faq", "cat", limit=2).json()["documents"]) == 2


def test_it_finds_nothing_for_words_not_there(carol: User, acme: Project) -> None:
    knowledge_base(acme, "faq", [("Refunds", "Refunds are paid.")])
    _, raw = start_run(carol, acme)
    assert search(raw, "faq", "unicorn").json() == {"documents": []}


@pytest.mark.parametrize("query,limit", [("", 4), ("   ", 4), (None, 4), ("x", 0), ("x", 21),
                                         ("x", True), ("x", "3"), ("x" * 1001, 4)])
def test_it_rejects_bad_search_requests(
    api: Api, carol: User, acme: Project, query: object, limit: object
) -> None:
    knowledge_base(acme, "faq", [])
    _, raw = start_run(carol, acme)
    api.assert_error(search(raw, "faq", query, limit), 400, "invalid_request")


def test_it_denies_another_projects_knowledge_base_like_a_missing_one(
    api: Api, carol: User, acme: Project, evil: Project
) -> None:
    knowledge_base(evil, "theirs", [("Secret", "the plans")])
    _, raw = start_run(carol, acme)
    other = api.assert_error(search(raw, "theirs", "plans"), 404, "resource_denied")
    missing = api.assert_error(search(raw, "nowhere", "plans"), 404, "resource_denied")
    assert other["message"].replace("theirs", "X") == missing["message"].replace("nowhere", "X")
