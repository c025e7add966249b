"""Running a published version: the same start as a design run, on the version's graph.

The run belongs to the version's design (its events, SSE and cancel routes are the
design's) and records `version_id`. Side effects were approved at publish, so tool and
api nodes run without `allow_side_effects`. The version's own resources and those of
every version it reaches are re-checked against the project at every start.
"""

from __future__ import annotations

import hashlib

from django.contrib.auth.models import User

from designs.models import Version
from kionga.errors import APIError
from runs import dispatch
from runs.models import Run
from runs.nested import resource_issues
from runs.start import StartRequest, Target, start_target


def version_fingerprint(version: Version, request: StartRequest) -> str:
    """Idempotency fingerprint: the body and which version it starts (a key reused for
    the design's own run with the same body is another request)."""
    return hashlib.sha256(f"version:{version.pk}:{request.fingerprint()}".encode()).hexdigest()


def do_start_version_run(user: User, version: Version, request: StartRequest) -> Run:
    dispatch.check_runner_configured()
    if request.revision is not None:
        raise APIError(400, "invalid_request", "A version run runs the version: revision "
                       "is only for design runs.", {"fields": {"revision": [
                           "Not allowed when running a published version."]}})
    graph = version.artifact["graph"]
    issues = resource_issues(version.project, graph, str(version.pk))
    if issues:
        raise APIError(422, "validation_failed", "This version names resources you can no "
                       "longer use.", {"issues": issues})
    target = Target(version.design, version.source_revision, graph, version.content_sha256,
                    version_id=str(version.pk), side_effects_approved=True)
    return start_target(user, target, request)
