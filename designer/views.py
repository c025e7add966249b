"""The canvas pages: one HTML shell per URL; the React app does the rest through the API."""

from __future__ import annotations

import uuid

from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.csrf import ensure_csrf_cookie

from designer.manifest import canvas_assets
from kionga.site import site_config

LOGIN_URL = "designer:login"


def _page(request: HttpRequest, design_id: uuid.UUID | None) -> HttpResponse:
    config = {
        "design_id": str(design_id) if design_id else None,
        "api": "/api/v1",
        "home": reverse("designer:home"),
        "design_url": reverse("designer:design", args=[uuid.UUID(int=0)]).replace(
            str(uuid.UUID(int=0)), "{id}"),
        "username": request.user.get_username(),
        # The header's links (landing page, approvals, admin for staff) and sign-out.
        "site": site_config(request.user),
    }
    return render(request, "designer/page.html",
                  {"assets": canvas_assets(), "config": config})


@ensure_csrf_cookie
@login_required(login_url=LOGIN_URL)
def home(request: HttpRequest) -> HttpResponse:
    """The person's designs, by project, and new designs from templates."""
    return _page(request, None)


@ensure_csrf_cookie
@login_required(login_url=LOGIN_URL)
def design(request: HttpRequest, design_id: uuid.UUID) -> HttpResponse:
    """The canvas of one design (the API answers 404 for a design the person may not read)."""
    return _page(request, design_id)


# Designers are not staff: the admin's own login page refuses them, this one does not.
# After it: `next` when safe, else LOGIN_REDIRECT_URL (the designer).
login = LoginView.as_view(template_name="designer/login.html", redirect_authenticated_user=True)
