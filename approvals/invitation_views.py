"""Invitations in the approver UI: a person who signs in sees the invitations made out
to them above their requests (approvals/invitations.html) and accepts or declines each
with one button. Thin: the same actions as POST /api/v1/me/invitations/{id}/accept and
…/decline (kionga.projects.invitations), so someone else's invitation is 404 here too."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from approvals.web_views import SIGN_IN, html_errors
from kionga.errors import APIError, invalid_field
from kionga.projects import invitations

ANSWERS = ("accept", "decline")


@never_cache
@require_POST
@login_required(login_url=SIGN_IN)
@html_errors
def invitation_answer(request: HttpRequest, invitation_id: uuid.UUID) -> HttpResponse:
    assert isinstance(request.user, User)  # login_required ran before us
    answer = request.POST.get("answer", "")
    if answer not in ANSWERS:
        raise invalid_field("answer", "Accept or decline.")
    try:
        if answer == "accept":
            joined = invitations.do_accept(request.user, invitation_id)
            messages.success(request, f"You joined {joined.project.name} as {joined.role}.")
        else:
            invitations.do_decline(request.user, invitation_id)
            messages.success(request, "Invitation declined.")
    except APIError as error:
        if error.status_code != 409:  # 404: not theirs, the error page says so
            raise
        messages.error(request, f"Nothing changed: {error.message}")
    return redirect("approver:list")
