"""The approvals list: requests of the caller's projects, newest first, a page at a time.

The cursor is the last request of the previous page (``?before=<id>``): pages stay
stable while new requests arrive, which an offset would not.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from django.db.models import Q, QuerySet

from approvals.actions import expire_overdue
from approvals.models import ApprovalRequest
from kionga.access import AnyUser, check_project_access, projects_of
from kionga.errors import invalid_field

PAGE_SIZE, MAX_PAGE_SIZE = 50, 200


def list_approvals(user: AnyUser, query: dict[str, Any]) -> dict[str, Any]:
    """One page of the requests the query selects, and the cursor of the next page."""
    visible = _visible(user, query.get("project_id"))
    # Whatever the sweep has not reached yet is shown as it is: past its deadline.
    expire_overdue(visible)
    rows = visible
    if query.get("status"):
        rows = rows.filter(status=query["status"])
    if query.get("run_id"):
        rows = rows.filter(run_id=query["run_id"])
    if query.get("before"):
        # Found among all the caller sees: a request decided (or expired) since the last
        # page left a ?status=pending list, but it still marks where that page ended.
        rows = _after_cursor(rows, _cursor(visible, query["before"]), query["before"])
    limit: int = query["limit"]
    page = list(rows.select_related("run__design", "decided_by", "project")[: limit + 1])
    more = len(page) > limit
    page = page[:limit]
    return {"approvals": [entry(a) for a in page],
            "next_before": str(page[-1].pk) if more else None}


def detail(approval: ApprovalRequest) -> dict[str, Any]:
    """A request as people read it: with its project's name, so that nobody decides a
    request without seeing which project asks."""
    return {**approval.to_dict(), "project_name": approval.project.name}


def entry(approval: ApprovalRequest) -> dict[str, Any]:
    """A request as the list shows it: with its project's name and its run's design."""
    design = approval.run.design if approval.run is not None else None
    return {**detail(approval),
            "design_id": str(design.pk) if design is not None else None,
            "design_name": design.name if design is not None else None}


def _visible(user: AnyUser, project_id: int | None) -> QuerySet[ApprovalRequest]:
    if project_id is not None:
        project = check_project_access(user, project_id)
        rows = ApprovalRequest.objects.filter(project=project)
    else:
        rows = ApprovalRequest.objects.filter(project__in=projects_of(user))
    return rows.order_by("-created_at", "-id")


def _cursor(visible: QuerySet[ApprovalRequest], before: uuid.UUID) -> datetime:
    created = visible.filter(pk=before).values_list("created_at", flat=True).first()
    if created is None:  # not a request the caller may see: one message for all
        raise invalid_field("before", "Not a request of this list.")
    return created


def _after_cursor(rows: QuerySet[ApprovalRequest], created: datetime,
                  before: uuid.UUID) -> QuerySet[ApprovalRequest]:
    return rows.filter(Q(created_at__lt=created) | Q(created_at=created, id__lt=before))
