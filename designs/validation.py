"""Validation reports of stored revisions, with the resource-free part cached on the row.

A revision's graph never changes once saved, so the resource-free part of its report
(everything but "does this ID exist") is computed once — on the first read — and kept
in DesignRevision.validation with a fingerprint of the validator's code; a new
validator (any change to contracts/) recomputes it on the next read.

Resource IDs are re-checked on every read, one query per kind (none of its own for a run
start: its one read answers them, runs.start_read): resources are created and deleted in
the admin at any time, and keeping their answers too would need invalidation on every
such change (and across projects' tenants) for a check that costs a few indexed queries.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Final

import contracts
from contracts.issues import Issue
from contracts.validate import Report, ResourceRef, validate_graph, with_resources
from designs.models import Design, DesignRevision
from designs.resource_check import Known, ProjectResources
from kionga.errors import APIError
from kionga.models import Project


def _fingerprint() -> str:
    digest = hashlib.sha256()
    for source in sorted(Path(contracts.__file__).parent.rglob("*.py")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()[:16]


VALIDATOR_FINGERPRINT: Final = _fingerprint()


def revision_report(revision: DesignRevision, project: Project,
                    known: Known | None = None) -> Report:
    """The report validate_graph(revision.graph, project's resources) gives. `known`:
    designs.resource_check.existing_refs_sql's answer about the references of the
    revision's stored validation, read with the revision (used only while that
    validation is current: a recomputed one asks anew)."""
    report = _cached(revision)
    if report is None:
        report = validate_graph(revision.graph, None)
        revision.validation = _to_cache(report, revision.graph)
        DesignRevision.objects.filter(pk=revision.pk).update(validation=revision.validation)
        known = None
    return with_resources(report, ProjectResources(project, known))


def check_runnable_revision(design: Design,
                            number: int | None) -> tuple[DesignRevision, Report]:
    """A stored revision (the latest when `number` is None) that can run or be published,
    with its report (graph and hash set): 404 when there is no such revision, 422
    validation_failed with the issues when it has errors."""
    number = number or design.revision
    stored = design.revisions.filter(number=number).first()
    if stored is None:
        raise missing_revision(number)
    return stored, check_runnable(stored, design.project)


def missing_revision(number: int) -> APIError:
    return APIError(404, "not_found", f"Revision {number} of this design does not exist.")


def check_runnable(stored: DesignRevision, project: Project,
                   known: Known | None = None) -> Report:
    """The revision's report (graph and hash set), or 422 validation_failed (`known`:
    as revision_report's)."""
    report = revision_report(stored, project, known)
    if not report.runnable or report.graph is None or report.content_sha256 is None:
        raise APIError(422, "validation_failed", "The graph has validation errors.",
                       {"issues": [i.to_dict() for i in report.issues]})
    return report


def _to_cache(report: Report, graph: Any) -> dict[str, Any]:
    return {
        "fingerprint": VALIDATOR_FINGERPRINT,
        "runnable": report.runnable,
        "issues": [i.to_dict() for i in report.issues],
        # Usually the stored graph is its own normalized form: do not store it twice.
        "graph": "stored" if report.graph == graph else report.graph,
        "content_sha256": report.content_sha256,
        "resource_refs": [ref.to_list() for ref in report.resource_refs],
    }


def _cached(revision: DesignRevision) -> Report | None:
    cache = revision.validation
    if not isinstance(cache, dict) or cache.get("fingerprint") != VALIDATOR_FINGERPRINT:
        return None
    graph = revision.graph if cache["graph"] == "stored" else cache["graph"]
    return Report(cache["runnable"], [Issue(**i) for i in cache["issues"]], graph,
                  cache["content_sha256"], [ResourceRef.from_list(r) for r in
                                            cache["resource_refs"]])
