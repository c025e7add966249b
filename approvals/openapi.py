"""OpenAPI shapes of the approval routes' answers (public and internal)."""

from __future__ import annotations

from typing import Any

from approvals.models import ApprovalRequest
from kionga.openapi import STRING, obj

APPROVAL_STATUS: dict[str, Any] = {"enum": list(ApprovalRequest.Status.values)}
APPROVAL = obj(
    {"id": STRING, "status": APPROVAL_STATUS, "comment": {"type": ["string", "null"]}},
    {"expires_at": STRING, "node_id": STRING, "run_id": {"type": ["string", "null"]}},
)
