"""Approver web UI: server-rendered pages for people deciding approval requests.

Thin views over the same checks and actions as the API (``approvals.actions``,
``approvals.listing``): a request of another project is 404, a viewer sees requests but
no decision form (a forged POST is 403), and a decision is ``do_decide`` — the run's
approval node polls the request every 0.5 s, so the run goes on at once. Plain forms and
POST/redirect/GET: everything works without JavaScript; ``approvals.js`` only counts the
time left down and refreshes the live parts of a page.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST
from rest_framework.exceptions import ValidationError

from approvals.actions import check_approval_access, do_decide
from approvals.listing import list_approvals
from approvals.models import ApprovalRequest
from approvals.serializers import ApprovalListQuerySerializer
from approvals.web_forms import DecisionForm
from kionga.access import ROLE_RANK, check_project_access, role_of
from kionga.errors import APIError
from kionga.models import Membership, Role
from kionga.notices import notice_urls
from kionga.projects.invitations import invitations_for
from kionga.request_body import parse
from runs.timeline import timeline

SIGN_IN = "approver:sign-in"
PAGE_SIZE = 25
ALL = "all"
STATUS_TABS = [*ApprovalRequest.Status.choices, (ALL, "All")]
ERROR_TITLES = {400: "That request is not valid", 403: "You cannot do this",
                404: "Not found", 409: "Already decided"}

View = Callable[..., HttpResponse]


def html_errors(view: View) -> View:
    """The API's errors as pages: same status and message, HTML instead of JSON."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except APIError as error:
            return _error_page(request, error.status_code, error.message)
        except ValidationError as error:  # query parameters, parsed as the API parses them
            return _error_page(request, 400, _field_errors(error))

    return wrapped


def _error_page(request: HttpRequest, status: int, message: str) -> HttpResponse:
    context = {"title": ERROR_TITLES.get(status, "Something went wrong"), "message": message}
    return render(request, "approvals/error.html", context, status=status)


def _field_errors(error: ValidationError) -> str:
    fields = error.detail if isinstance(error.detail, dict) else {"request": error.detail}
    return " ".join(f"{name}: {' '.join(str(t) for t in texts)}"
                    for name, texts in fields.items())


def time_left(expires_at: datetime, now: datetime) -> str:
    """"2 min 05 s left" (approvals.js counts the same text down each second)."""
    seconds = int((expires_at - now).total_seconds())
    if seconds <= 0:
        return "time is up"
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours} h {minutes:02d} min left"
    if minutes:
        return f"{minutes} min {seconds:02d} s left"
    return f"{seconds} s left"


@never_cache  # pages of one person's requests: never in a shared (or back-button) cache
@require_GET
@login_required(login_url=SIGN_IN)
@html_errors
def approval_list(request: HttpRequest) -> HttpResponse:
    status = request.GET.get("status") or ApprovalRequest.Status.PENDING
    raw = {"status": "" if status == ALL else status, "before": request.GET.get("before", ""),
           "limit": str(PAGE_SIZE)}
    query = parse(ApprovalListQuerySerializer, {k: v for k, v in raw.items() if v})
    page = list_approvals(request.user, query)
    assert isinstance(request.user, User)
    projects = {m.project_id: (m.project.name, m.role) for m in
                Membership.objects.filter(user=request.user).select_related("project")}
    now = timezone.now()
    return render(request, "approvals/list.html", {
        "approvals": [_card(entry, projects, now) for entry in page["approvals"]],
        "next_before": page["next_before"], "status": status, "tabs": STATUS_TABS,
        "status_label": dict(STATUS_TABS).get(status, status), "has_projects": bool(projects),
        "now": now, "invitations": invitations_for(request.user),
        "notice_urls": notice_urls(request.user),
    })


@never_cache  # pages of one person's requests: never in a shared (or back-button) cache
@require_GET
@login_required(login_url=SIGN_IN)
@html_errors
def approval_detail(request: HttpRequest, approval_id: uuid.UUID) -> HttpResponse:
    approval = check_approval_access(request.user, approval_id)
    return _detail(request, approval, DecisionForm())


@never_cache
@require_POST
@login_required(login_url=SIGN_IN)
@html_errors
def approval_decision(request: HttpRequest, approval_id: uuid.UUID) -> HttpResponse:
    approval = check_approval_access(request.user, approval_id)
    # Before the form: a viewer's forged POST is 403 whatever it carries.
    check_project_access(request.user, approval.project_id, Role.EDITOR)
    form = DecisionForm(request.POST)
    if not form.is_valid():
        return _detail(request, approval, form, status=400)
    assert isinstance(request.user, User)
    decision = form.cleaned_data["decision"]
    try:
        do_decide(request.user, approval, decision, form.cleaned_data["comment"])
    except APIError as error:
        if error.code != "approval_not_pending":
            raise
        messages.error(request, _not_pending(approval))
    else:
        done = "Approved" if decision == "approve" else "Rejected"
        messages.success(request, f"{done}. The run has been told and goes on now.")
    return redirect("approver:detail", approval_id=approval.pk)


def _detail(request: HttpRequest, approval: ApprovalRequest, form: DecisionForm,
            status: int = 200) -> HttpResponse:
    role = role_of(request.user, approval.project_id)
    pending = approval.status == ApprovalRequest.Status.PENDING
    run = approval.run
    now = timezone.now()
    return render(request, "approvals/detail.html", {
        "approval": approval, "project": approval.project, "role": role,
        "can_decide": pending and _decides(role),
        "pending": pending, "time_left": time_left(approval.expires_at, now), "now": now,
        "run": run, "design": run.design if run is not None else None,
        "events": timeline(run) if run is not None else [],
        "run_active": run is not None and run.is_active, "form": form,
    }, status=status)


def _card(entry: dict[str, Any], projects: dict[int, tuple[str, str]],
          now: datetime) -> dict[str, Any]:
    """A list entry (as the API lists it) with what the page shows besides."""
    expires = parse_datetime(entry["expires_at"])
    assert expires is not None
    decided = parse_datetime(entry["decided_at"]) if entry["decided_at"] else None
    name, role = projects.get(entry["project_id"], ("", Role.VIEWER))
    return {**entry, "project_name": name, "view_only": not _decides(role),
            "created": parse_datetime(entry["created_at"]), "expires": expires,
            "decided": decided, "time_left": time_left(expires, now)}


def _decides(role: str | None) -> bool:
    return role is not None and ROLE_RANK[role] >= ROLE_RANK[Role.EDITOR]


def _not_pending(approval: ApprovalRequest) -> str:
    """Why a decision changed nothing, in words: who decided it and when, or what ended it."""
    at = (approval.decided_at or approval.expires_at).strftime("%H:%M:%S UTC")
    if approval.status in (ApprovalRequest.Status.APPROVED, ApprovalRequest.Status.REJECTED):
        who = approval.decided_by.get_username() if approval.decided_by else "someone"
        return f"Nothing changed: {who} already {approval.status} this request at {at}."
    return f"Nothing changed: this request is {approval.status}. {approval.reason}"
