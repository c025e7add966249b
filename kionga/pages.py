"""The platform's own web pages: the landing page at / (its sign-in for people who are
not signed in) and signing out."""

from __future__ import annotations

from django.contrib.auth.views import LoginView, LogoutView
from django.http import HttpRequest, HttpResponseBase, HttpResponseNotAllowed
from django.shortcuts import render

from kionga.site import site_links

# After it, `next` when it is a safe URL of this host, else LOGIN_REDIRECT_URL (designer).
sign_in = LoginView.as_view(template_name="kionga/sign_in.html")
sign_out = LogoutView.as_view(next_page="home")


def home(request: HttpRequest) -> HttpResponseBase:
    """Links to what the person may open, and signing out; the sign-in for others."""
    if not request.user.is_authenticated:
        return sign_in(request)
    if request.method not in ("GET", "HEAD"):
        return HttpResponseNotAllowed(["GET", "HEAD"])
    return render(request, "kionga/home.html", {"links": site_links(request.user)})
