"""POST /agent-versions/{id}/runs: run a published version (body and answers as design runs)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from designs.versions import check_version_access
from kionga.models import Role
from kionga.openapi import ERRORS, ok
from kionga.request_body import parse
from runs import idempotency
from runs import openapi as doc
from runs.serializers import StartRunSerializer
from runs.start import StartRequest
from runs.versions import do_start_version_run, version_fingerprint
from runs.views import IDEMPOTENCY


@extend_schema(request=StartRunSerializer, parameters=[IDEMPOTENCY],
               responses={201: ok(doc.RUN), 200: ok(doc.RUN), **ERRORS},
               operation_id="start_version_run")
@api_view(["POST"])
def version_runs(request: Request, version_id: Any) -> Response:
    version = check_version_access(request.user, version_id, Role.EDITOR)
    start = StartRequest.of(parse(StartRunSerializer, request.data))
    key = idempotency.check_key(request.headers.get("Idempotency-Key"))
    assert isinstance(request.user, User)
    user = request.user
    run, replayed = idempotency.start_once(
        version.project, user, key, version_fingerprint(version, start),
        lambda: do_start_version_run(user, version, start))
    return Response(run.to_dict(), status=200 if replayed else 201)
