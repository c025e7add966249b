"""The provider's routes: DOT's OIDC endpoints under /o/ (issuer http://host/o), a plain
sign-in form, and /control/ for the test to set people and the client."""

from __future__ import annotations

import json
import os
from typing import Any

from django.contrib.auth import views as auth_views
from django.contrib.auth.models import Group, User
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider.models import Application

from tests.oidc_provider.state import UNVERIFIED


def _authorised(request: HttpRequest) -> bool:
    return request.headers.get("Authorization") == f"Bearer {os.environ['PROVIDER_CONTROL']}"


@csrf_exempt
def control_user(request: HttpRequest) -> HttpResponse:
    """Create, change, disable or delete one person: {username, password, email,
    email_verified, groups, active, delete}."""
    if not _authorised(request):
        return HttpResponse(status=403)
    body: dict[str, Any] = json.loads(request.body)
    username = body["username"]
    if body.get("delete"):
        User.objects.filter(username=username).delete()
        return JsonResponse({"deleted": username})
    user, _ = User.objects.get_or_create(username=username)
    if "password" in body:
        user.set_password(body["password"])
    user.email = body.get("email", user.email)
    user.is_active = body.get("active", True)
    user.save()
    if "groups" in body:
        user.groups.set([Group.objects.get_or_create(name=name)[0] for name in body["groups"]])
    if body.get("email_verified", True):
        UNVERIFIED.discard(username)
    else:
        UNVERIFIED.add(username)
    return JsonResponse({"username": username})


@csrf_exempt
def control_client(request: HttpRequest) -> HttpResponse:
    """Register (or replace) the relying party: {client_id, client_secret, redirect_uris}."""
    if not _authorised(request):
        return HttpResponse(status=403)
    body = json.loads(request.body)
    Application.objects.filter(client_id=body["client_id"]).delete()
    Application.objects.create(
        name="kionga", client_id=body["client_id"], client_secret=body["client_secret"],
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=" ".join(body["redirect_uris"]), algorithm=Application.RS256_ALGORITHM,
        skip_authorization=True)
    return JsonResponse({"client_id": body["client_id"]})


urlpatterns = [
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("control/user", control_user),
    path("control/client", control_client),
]
