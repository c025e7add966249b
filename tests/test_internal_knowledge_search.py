"""kionga.knowledge on its own: PostgreSQL full-text search."""

from __future__ import annotations

import pytest

from kionga.knowledge import search_documents
from kionga.models import Project
from kionga.resource_models import KnowledgeBase, KnowledgeDocument


@pytest.fixture
def kb(acme: Project) -> KnowledgeBase:
    base = KnowledgeBase.objects.create(project=acme, key="faq")
    for title, text in [
        ("Opening hours", "The shop opens at nine and closes at six."),
        ("Returns", "Returned items are refunded within 14 days."),
        ("Return shipping", "Return shipping is free; returns need a receipt."),
        ("Jobs", "We are hiring."),
    ]:
        KnowledgeDocument.objects.create(knowledge_base=base, title=title, text=text)
    return base


def titles(found: list[dict[str, object]]) -> list[object]:
    return [d["metadata"]["title"] for d in found]  # type: ignore[index]


def test_it_stems_and_ranks_by_relevance(kb: KnowledgeBase) -> None:
    assert titles(search_documents(kb, "returning", 10)) == ["Return shipping", "Returns"]


def test_it_understands_web_search_syntax(kb: KnowledgeBase) -> None:
    assert titles(search_documents(kb, 'return -shipping', 10)) == ["Returns"]
    either = titles(search_documents(kb, '"closes at six" or hiring', 10))
    assert sorted(either) == ["Jobs", "Opening hours"]  # type: ignore[type-var]


def test_it_searches_titles_too(kb: KnowledgeBase) -> None:
    assert titles(search_documents(kb, "opening", 10)) == ["Opening hours"]


def test_it_breaks_ties_by_document_id(acme: Project) -> None:
    base = KnowledgeBase.objects.create(project=acme, key="same")
    docs = [KnowledgeDocument.objects.create(knowledge_base=base, title="", text="same words")
            for _ in range(3)]
    assert [d["id"] for d in search_documents(base, "words", 10)] == [str(d.pk) for d in docs]


def test_it_finds_nothing_for_stop_words_only(kb: KnowledgeBase) -> None:
    assert search_documents(kb, "the and", 10) == []


def test_it_only_searches_the_given_knowledge_base(kb: KnowledgeBase, acme: Project) -> None:
    other = KnowledgeBase.objects.create(project=acme, key="other")
    KnowledgeDocument.objects.create(knowledge_base=other, title="Returns", text="returns")
    assert len(search_documents(kb, "returns", 10)) == 2
