"""Publishing a revision: an immutable, content-hashed version with its artifact.

Two publishes of one design are serialized by a lock on the design row, so numbers
are 1, 2, 3... without gaps and the same behaviour is never published twice (the
second finds the first and answers it with 200, saying that nothing new was published).
The unique constraints on (design, number) and (design, content_sha256) hold even if a
caller forgot the lock. A version never changes: an evaluation named by a publish that
finds an existing version is not attached to it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Max

from contracts.registry import REGISTRY_VERSION
from contracts.schemas import schema_errors
from designs.models import Design, DesignRevision, Version
from designs.quality_gate import check_quality_gate
from designs.validation import check_runnable_revision
from designs.versions import reached_versions
from kionga import audit

RUNTIME_MODULE: Final = "agents.native_graph:build_native"
MAX_NOTES_CHARS: Final = 10_000


@dataclass(frozen=True)
class PublishRequest:
    revision: int
    notes: str
    evaluation_id: str | None


class ArtifactInvalid(RuntimeError):
    """The artifact we built does not follow artifact.v1: a bug, never stored."""


def do_publish(user: User, design: Design, request: PublishRequest) -> tuple[Version, bool]:
    """(the version, True when it is new). 404 for a missing revision, 422 for one with
    validation errors, 409 quality_gate when a required evaluation is missing."""
    stored, report = check_runnable_revision(design, request.revision)
    assert report.graph is not None and report.content_sha256 is not None
    evaluation = check_quality_gate(design, report.content_sha256, request.evaluation_id)
    with transaction.atomic():
        # The lock serializes publishes of this design (numbering and dedup below).
        Design.objects.select_for_update().filter(pk=design.pk).first()
        existing = design.versions.filter(content_sha256=report.content_sha256).first()
        if existing is not None:
            return existing, False
        version = _insert(user, design, stored, report.graph, report.content_sha256,
                          request.notes, evaluation)
    return version, True


def publish_answer(version: Version, created: bool, request: PublishRequest) -> dict[str, Any]:
    """The publish's answer: the version's summary, `created`, and for an existing version
    a `message` saying that nothing new was published and why."""
    answer: dict[str, Any] = {**version.summary(), "created": created}
    if not created:
        answer["message"] = unchanged_message(version, request)
    return answer


def unchanged_message(version: Version, request: PublishRequest) -> str:
    carried = version.artifact.get("evaluation")
    carried_id = carried.get("evaluation_id") if isinstance(carried, dict) else None
    message = (f"Nothing new was published: revision {request.revision} has the same "
               f"behaviour as version {version.number} (content_sha256 "
               f"{version.content_sha256[:12]}…), which is returned. ")
    message += (f"Version {version.number} carries the evaluation summary of evaluation "
                f"{carried_id}" if carried_id else
                f"Version {version.number} carries no evaluation summary")
    sent = request.evaluation_id
    if sent is not None and _same_id(sent, carried_id):
        return message + "."
    if sent is not None:
        message += (f"; evaluation {sent} was not attached (a published version never "
                    "changes)")
    return message + "."


def _same_id(sent: str, carried: str | None) -> bool:
    try:
        return carried is not None and uuid.UUID(sent) == uuid.UUID(carried)
    except ValueError:
        return False


def _insert(user: User, design: Design, revision: DesignRevision, graph: dict[str, Any],
            sha: str, notes: str, evaluation: dict[str, Any] | None) -> Version:
    latest = design.versions.aggregate(latest=Max("number"))["latest"] or 0
    version_id = uuid.uuid4()
    published_at = datetime.now(UTC)
    artifact = build_artifact(
        number=latest + 1, sha=sha, graph=graph, revision=revision.number, user=user,
        notes=notes, evaluation=evaluation,
        subflows=reached_versions(design.project, graph), design_id=str(design.pk),
        version_id=str(version_id), published_at=published_at.isoformat())
    version = Version.objects.create(
        id=version_id, design=design, project=design.project, number=latest + 1,
        content_sha256=sha, source_revision=revision.number, notes=notes, artifact=artifact,
        author=user, created_at=published_at)
    audit.record("version.published", project=design.project, actor=user,
                 target_type="version", target_id=version.pk,
                 details={"design_id": str(design.pk), "version": version.number,
                          "content_sha256": sha})
    return version


def build_artifact(*, number: int, sha: str, graph: dict[str, Any], revision: int, user: User,
                   notes: str, evaluation: dict[str, Any] | None,
                   subflows: list[dict[str, Any]], design_id: str, version_id: str,
                   published_at: str) -> dict[str, Any]:
    """The artifact.v1 document, checked against its schema before anyone stores it."""
    artifact = {
        "version": number,
        "content_sha256": sha,
        "registry_version": REGISTRY_VERSION,
        "graph": graph,
        "source_revision": revision,
        "author": {"id": user.pk, "name": user.get_username()},
        "notes": notes,
        "runtime_module": RUNTIME_MODULE,
        "evaluation": evaluation,
        "subflows": subflows,
        "design_id": design_id,
        "version_id": version_id,
        "published_at": published_at,
    }
    errors = schema_errors("artifact.v1", artifact)
    if errors:
        raise ArtifactInvalid("; ".join(errors[:5]))
    return artifact
