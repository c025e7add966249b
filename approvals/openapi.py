"""OpenAPI shapes of the approval routes (public and internal)."""

from __future__ import annotations

from typing import Any

from kionga.openapi import STRING, obj

APPROVAL_STATUS: dict[str, Any] = {"enum": ["pending", "approved", "rejected", "expired",
                                            "cancelled"]}
APPROVAL_REQUEST = obj({"node_id": STRING, "message": STRING,
                        "timeout_seconds": {"type": "integer", "minimum": 10, "maximum": 290}},
                       {"preview": STRING})
APPROVAL = obj(
    {"id": STRING, "status": APPROVAL_STATUS, "comment": {"type": ["string", "null"]}},
    {"expires_at": STRING, "node_id": STRING, "run_id": {"type": ["string", "null"]}},
)
DECISION = obj({"decision": {"enum": ["approve", "reject"]}}, {"comment": STRING})
