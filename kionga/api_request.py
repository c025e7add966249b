"""The API's rules before a view, for the few routes whose answer is not a DRF
response (the event streams): DRF's own APIView.initial steps, not a copy of them.

authenticate(request) runs the API's authentication classes, permission classes and
(unless `count` is False) throttles, exactly as every DRF route does before its view,
and returns the caller; a refusal is raised as the APIException DRF would answer,
with its 401 challenge set by DRF's handle_exception (kionga.errors renders it)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest
from rest_framework import exceptions
from rest_framework.views import APIView


def authenticate(request: HttpRequest, *, count: bool = True) -> User:
    """The signed-in caller of `request` by the API's rules, or their APIException.
    `count` False: the throttles are not counted (an open stream's re-check)."""
    view: Any = APIView()
    view.args, view.kwargs, view.headers = (), {}, {}
    drf_request = view.initialize_request(request)
    view.request = drf_request
    try:
        view.perform_authentication(drf_request)
        view.check_permissions(drf_request)
        if count:
            view.check_throttles(drf_request)
    except exceptions.APIException as exc:
        if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
            view.handle_exception(exc)  # DRF's challenge (WWW-Authenticate) or its 403
        raise
    user = drf_request.user
    assert isinstance(user, User)  # IsAuthenticated let it through
    return user
