"""``Authorization: Bearer <token>`` authentication for the public API."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib import auth
from django.contrib.auth.models import AnonymousUser, User
from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.request import Request

from kionga.models import ApiToken
from kionga.tokens import find_token, signed_in_user

# The challenge of a public API request without (valid) credentials.
BEARER_CHALLENGE = 'Bearer realm="api"'


class PublicApiAuthentication(BaseAuthentication):
    """Base of the public API's own authentication classes. DRF takes the 401 challenge
    from the first class a route lists (without one it answers 403); a route that lists
    classes of its own puts one of these first, so an anonymous caller gets the same 401
    everywhere (tests/test_platform_anonymous_routes.py)."""

    def authenticate_header(self, request: Request) -> str:
        return BEARER_CHALLENGE


class BearerTokenAuthentication(PublicApiAuthentication):
    keyword = b"bearer"

    def authenticate(self, request: Request) -> tuple[User, ApiToken] | None:
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != self.keyword:
            return None  # Not ours: let session authentication try.
        if len(parts) != 2:
            raise invalid_token("Malformed Authorization header; use 'Bearer <token>'.")
        token = find_token(parts[1].decode("latin-1"))
        if token is None:
            raise invalid_token("The token is unknown or revoked.")
        return signed_in_user(token), token


def invalid_token(message: str) -> exceptions.AuthenticationFailed:
    return exceptions.AuthenticationFailed(message, code="invalid_token")


def fresh_session_request(request: HttpRequest) -> HttpRequest:
    """`request` with its session read from the session store now (as
    AuthenticationMiddleware reads it), not its copy of the request's start: a stream's
    re-check sees a session signed out, a changed password, a deactivated person."""
    fresh = HttpRequest()
    fresh.META, fresh.method, fresh.path = request.META, request.method, request.path
    session: Any = getattr(request, "session", None)
    store = import_module(settings.SESSION_ENGINE).SessionStore
    known = session is not None and session.session_key is not None
    fresh.session = store(session.session_key) if known else store()
    fresh.user = SimpleLazyObject(lambda: auth.get_user(fresh))  # type: ignore[assignment]
    fresh._dont_enforce_csrf_checks = True  # type: ignore[attr-defined]  # a GET re-check
    return fresh


def fresh_session_user(request: HttpRequest) -> User | AnonymousUser:
    """The person the request's session signs in, read from the session store now."""
    user: User | AnonymousUser = auth.get_user(fresh_session_request(request))  # type: ignore[assignment]
    return user
