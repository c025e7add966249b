"""Knowledge-base search: PostgreSQL full-text search, with a plain word match elsewhere.

PostgreSQL (production and the test suite) ranks with ``websearch_to_tsquery`` over
title and text; the SQLite quick-start default has no full-text search, so there
documents are ranked by how many query words they contain (case-insensitive).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector
from django.db import connection

from kionga.resource_models import KnowledgeBase, KnowledgeDocument

# Stemming and stop words of one fixed language, so results do not depend on the
# server's default_text_search_config.
SEARCH_CONFIG = "english"


def search_documents(knowledge_base: KnowledgeBase, query: str, limit: int) -> list[dict[str, Any]]:
    """The best `limit` documents for query, best first (ties by document id)."""
    documents = KnowledgeDocument.objects.filter(knowledge_base=knowledge_base)
    if connection.vendor == "postgresql":
        return _full_text(documents, query, limit)
    return rank_by_words(documents, query, limit)


def _full_text(documents: Any, query: str, limit: int) -> list[dict[str, Any]]:
    vector = SearchVector("title", "text", config=SEARCH_CONFIG)
    wanted = SearchQuery(query, search_type="websearch", config=SEARCH_CONFIG)
    found = (
        documents.annotate(search=vector, rank=SearchRank(vector, wanted))
        .filter(search=wanted)
        .order_by("-rank", "id")[:limit]
    )
    return [document_dict(doc, float(doc.rank)) for doc in found]


def rank_by_words(
    documents: Iterable[KnowledgeDocument], query: str, limit: int
) -> list[dict[str, Any]]:
    """Documents containing query words, by how many distinct ones, then by id."""
    words = _words(query)
    scored = []
    for doc in documents:
        hits = len(words & _words(f"{doc.title} {doc.text}"))
        if hits:
            scored.append((hits / len(words), doc))
    scored.sort(key=lambda pair: (-pair[0], pair[1].pk))
    return [document_dict(doc, score) for score, doc in scored[:limit]]


def document_dict(doc: KnowledgeDocument, score: float) -> dict[str, Any]:
    return {"id": str(doc.pk), "text": doc.text, "score": score, "metadata": {"title": doc.title}}


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.casefold()))
