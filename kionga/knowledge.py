"""Knowledge-base search: PostgreSQL full-text search, ranked with
``websearch_to_tsquery`` over title and text."""

from __future__ import annotations

from typing import Any

from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector

from kionga.resource_models import KnowledgeBase, KnowledgeDocument

# Stemming and stop words of one fixed language, so results do not depend on the
# server's default_text_search_config.
SEARCH_CONFIG = "english"


def search_documents(knowledge_base: KnowledgeBase, query: str, limit: int) -> list[dict[str, Any]]:
    """The best `limit` documents for query, best first (ties by document id)."""
    documents = KnowledgeDocument.objects.filter(knowledge_base=knowledge_base)
    vector = SearchVector("title", "text", config=SEARCH_CONFIG)
    wanted = SearchQuery(query, search_type="websearch", config=SEARCH_CONFIG)
    found = (
        documents.annotate(search=vector, rank=SearchRank(vector, wanted))
        .filter(search=wanted)
        .order_by("-rank", "id")[:limit]
    )
    return [document_dict(doc, float(doc.rank)) for doc in found]


def document_dict(doc: KnowledgeDocument, score: float) -> dict[str, Any]:
    return {"id": str(doc.pk), "text": doc.text, "score": score, "metadata": {"title": doc.title}}
