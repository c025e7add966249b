"""OpenAPI shapes of the approval routes' answers (public and internal)."""

from __future__ import annotations

from typing import Any

from approvals.models import ApprovalRequest
from kionga.openapi import INTEGER, STRING, obj

APPROVAL_STATUS: dict[str, Any] = {"enum": list(ApprovalRequest.Status.values)}
NULLABLE_STRING: dict[str, Any] = {"type": ["string", "null"]}
APPROVAL = obj(
    {"id": STRING, "status": APPROVAL_STATUS, "comment": NULLABLE_STRING,
     "reason": NULLABLE_STRING},
    {"expires_at": STRING, "node_id": STRING, "run_id": NULLABLE_STRING},
)
_REQUEST_FIELDS: dict[str, Any] = {
    "id": STRING, "project_id": INTEGER, "run_id": NULLABLE_STRING, "node_id": STRING,
    "message": STRING, "preview": STRING, "status": APPROVAL_STATUS,
    "comment": NULLABLE_STRING, "reason": NULLABLE_STRING, "decided_by": NULLABLE_STRING,
    "decided_at": NULLABLE_STRING, "expires_at": STRING, "created_at": STRING,
}
# One request as people read and decide it (approvals.listing.detail).
APPROVAL_DETAIL = obj({**_REQUEST_FIELDS, "project_name": STRING})
# A list entry adds the design the run belongs to (approvals.listing.entry).
LIST_ENTRY = obj({**_REQUEST_FIELDS, "project_name": STRING, "design_id": NULLABLE_STRING,
                  "design_name": NULLABLE_STRING})
APPROVAL_LIST = obj({"approvals": {"type": "array", "items": LIST_ENTRY},
                     "next_before": NULLABLE_STRING})
