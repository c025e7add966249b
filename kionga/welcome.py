"""/welcome/<invitation>/<token>: an invited person with no account yet chooses a
password through the one-time link of their invitation email (kionga.invitation_links)
and lands signed in on the designer, a member of the project."""

from __future__ import annotations

import uuid

from django.contrib.auth import login
from django.contrib.auth.forms import SetPasswordForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods

from kionga import invitation_links

REFUSED = ("This link has been used already, has expired, or its invitation was "
           "withdrawn. Ask the project's administrator to invite you again.")


@never_cache
@sensitive_post_parameters("new_password1", "new_password2")
@require_http_methods(["GET", "POST"])
def welcome(request: HttpRequest, invitation_id: uuid.UUID, token: str) -> HttpResponse:
    try:
        invitation = invitation_links.check_link(invitation_id, token)
    except invitation_links.LinkRefused:
        return render(request, "kionga/welcome.html", {"refused": REFUSED}, status=404)
    account = invitation.invitee
    assert account is not None  # check_link found a waiting invited account
    form = SetPasswordForm(account, request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            joined = invitation_links.do_set_password(
                invitation_id, token, form.cleaned_data["new_password1"])
        except invitation_links.LinkRefused:
            return render(request, "kionga/welcome.html", {"refused": REFUSED}, status=404)
        login(request, joined.user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("designer:home")
    return render(request, "kionga/welcome.html",
                  {"form": form, "invitation": invitation, "account": account})
