"""The approvals list: requests of the caller's projects, newest first, a page at a time.

The cursor is the last request of the previous page (``?before=<id>``): pages stay
stable while new requests arrive, which an offset would not.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import Q, QuerySet

from approvals.actions import expire_overdue
from approvals.models import ApprovalRequest
from kionga.access import AnyUser, check_project_access, projects_of
from kionga.errors import invalid_field

PAGE_SIZE, MAX_PAGE_SIZE = 50, 200


def list_approvals(user: AnyUser, query: dict[str, Any]) -> dict[str, Any]:
    """One page of the requests the query selects, and the cursor of the next page."""
    rows = _visible(user, query.get("project_id"))
    # Whatever the sweep has not reached yet is shown as it is: past its deadline.
    expire_overdue(rows)
    if query.get("status"):
        rows = rows.filter(status=query["status"])
    if query.get("run_id"):
        rows = rows.filter(run_id=query["run_id"])
    if query.get("before"):
        rows = _after_cursor(rows, query["before"])
    limit: int = query["limit"]
    page = list(rows.select_related("run__design", "decided_by")[: limit + 1])
    more = len(page) > limit
    page = page[:limit]
    return {"approvals": [entry(a) for a in page],
            "next_before": str(page[-1].pk) if more else None}


def entry(approval: ApprovalRequest) -> dict[str, Any]:
    """A request as the list shows it: with its run's design."""
    design = approval.run.design if approval.run is not None else None
    return {**approval.to_dict(),
            "design_id": str(design.pk) if design is not None else None,
            "design_name": design.name if design is not None else None}


def _visible(user: AnyUser, project_id: int | None) -> QuerySet[ApprovalRequest]:
    if project_id is not None:
        project = check_project_access(user, project_id)
        rows = ApprovalRequest.objects.filter(project=project)
    else:
        rows = ApprovalRequest.objects.filter(project__in=projects_of(user))
    return rows.order_by("-created_at", "-id")


def _after_cursor(rows: QuerySet[ApprovalRequest],
                  before: uuid.UUID) -> QuerySet[ApprovalRequest]:
    cursor = rows.filter(pk=before).values_list("created_at", flat=True).first()
    if cursor is None:  # not one the caller may see with these filters: same message
        raise invalid_field("before", "Not a request of this list.")
    return rows.filter(Q(created_at__lt=cursor) | Q(created_at=cursor, id__lt=before))
