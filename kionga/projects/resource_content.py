"""What knowledge bases and datasets hold: documents (searchable as soon as they are
stored: kionga.knowledge searches the table itself) and objects by key."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User

from kionga import audit
from kionga.errors import not_found
from kionga.models import Project
from kionga.resource_models import Dataset, DatasetObject, KnowledgeBase, KnowledgeDocument

LIST_LIMIT = 1000
PREVIEW_CHARS = 500


def document_dict(doc: KnowledgeDocument, full: bool = False) -> dict[str, Any]:
    text = doc.text if full else doc.text[:PREVIEW_CHARS]
    return {"id": doc.pk, "title": doc.title, "text": text, "characters": len(doc.text)}


def documents_of(knowledge_base: KnowledgeBase) -> list[dict[str, Any]]:
    found = knowledge_base.documents.order_by("id")[:LIST_LIMIT]
    return [document_dict(doc) for doc in found]


def do_add_document(actor: User, project: Project, knowledge_base: KnowledgeBase,
                    title: str, text: str) -> KnowledgeDocument:
    doc = KnowledgeDocument.objects.create(knowledge_base=knowledge_base, title=title, text=text)
    audit.record("knowledge_document.added", project=project, actor=actor,
                 target_type="knowledge_base", target_id=knowledge_base.key,
                 details={"document_id": doc.pk, "title": title})
    return doc


def do_remove_document(actor: User, project: Project, knowledge_base: KnowledgeBase,
                       document_id: int) -> None:
    deleted, _ = knowledge_base.documents.filter(pk=document_id).delete()
    if not deleted:
        raise not_found("Document not found.")
    audit.record("knowledge_document.removed", project=project, actor=actor,
                 target_type="knowledge_base", target_id=knowledge_base.key,
                 details={"document_id": document_id})


def object_keys(dataset: Dataset) -> list[str]:
    return list(dataset.entries.order_by("key").values_list("key", flat=True)[:LIST_LIMIT])


def check_object(dataset: Dataset, key: str) -> DatasetObject:
    found = dataset.entries.filter(key=key).first()
    if found is None:
        raise not_found(f"Dataset {dataset.key!r} has no object {key!r}.")
    return found


def do_put_object(actor: User, project: Project, dataset: Dataset, key: str,
                  value: Any) -> bool:
    """Store value under key; whether it was created (else replaced)."""
    _, created = DatasetObject.objects.update_or_create(dataset=dataset, key=key,
                                                        defaults={"value": value})
    audit.record("dataset_object.stored", project=project, actor=actor, target_type="dataset",
                 target_id=dataset.key, details={"key": key, "created": created})
    return created


def do_delete_object(actor: User, project: Project, dataset: Dataset, key: str) -> None:
    check_object(dataset, key).delete()
    audit.record("dataset_object.deleted", project=project, actor=actor, target_type="dataset",
                 target_id=dataset.key, details={"key": key})
