"""The authentication backend of a sign-in through the provider (mozilla-django-oidc's,
with the rules of docs/decisions/oidc-sign-in.md):

- the ID token must come from the configured issuer, for this client (the library checks
  the signature, expiry and nonce, not these);
- the person is the account with the provider's *verified* email (case-insensitive): none
  is made, with the email as user name and no usable password; several: refused;
- an inactive account is refused (but an invited account waiting for its first password
  is activated: the provider vouches for the email), and a session whose account was
  deactivated since ends (``get_user`` is ModelBackend's, which drops inactive people);
- with KIONGA_OIDC_GROUP_ROLES, the groups claim sets the roles in the mapped projects;
- a provider that fails mid-way (token, keys, userinfo) refuses the sign-in, logged.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

import jwt
import requests
from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import User
from django.core.exceptions import SuspiciousOperation
from django.db.models import QuerySet
from django.http import HttpRequest
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from kionga import oidc
from kionga.models import InvitedAccount
from kionga.oidc_memberships import do_sync_memberships, groups_of

logger = logging.getLogger(__name__)


class ProviderBackend(OIDCAuthenticationBackend):  # type: ignore[misc]
    get_settings = staticmethod(oidc.library_setting)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Django builds every backend for every sign-in, local ones too: the provider's
        # endpoints are read only when a sign-in through it needs them (endpoint()).
        self.UserModel = User

    def endpoint(self, name: str) -> Any:
        return oidc.library_setting(name)

    @property
    def OIDC_OP_TOKEN_ENDPOINT(self) -> str:  # noqa: N802 (the library's names)
        return str(self.endpoint("OIDC_OP_TOKEN_ENDPOINT"))

    @property
    def OIDC_OP_USER_ENDPOINT(self) -> str:  # noqa: N802
        return str(self.endpoint("OIDC_OP_USER_ENDPOINT"))

    @property
    def OIDC_OP_JWKS_ENDPOINT(self) -> str:  # noqa: N802
        return str(self.endpoint("OIDC_OP_JWKS_ENDPOINT"))

    @property
    def OIDC_RP_CLIENT_ID(self) -> str:  # noqa: N802
        return str(settings.OIDC_RP_CLIENT_ID)

    @property
    def OIDC_RP_CLIENT_SECRET(self) -> str:  # noqa: N802
        return str(settings.OIDC_RP_CLIENT_SECRET)

    @property
    def OIDC_RP_SIGN_ALGO(self) -> str:  # noqa: N802
        return str(settings.OIDC_RP_SIGN_ALGO)

    OIDC_RP_IDP_SIGN_KEY = None

    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> User | None:
        if not oidc.enabled() or request is None or not {"code", "state"} <= set(request.GET):
            return None  # a local sign-in (or none configured): not ours
        try:
            user: User | None = super().authenticate(request, **kwargs)
        except (requests.RequestException, oidc.ProviderUnavailable, jwt.PyJWTError,
                SuspiciousOperation, ValueError, KeyError) as exc:
            logger.warning("sign-in through the provider refused: %s", exc)
            return None
        if user is not None and not user.is_active:
            logger.warning("sign-in through the provider refused: account %s is deactivated",
                           user.pk)
            return None
        return user

    def verify_token(self, token: str, **kwargs: Any) -> dict[str, Any]:
        payload: dict[str, Any] = super().verify_token(token, **kwargs)
        if "nonce" not in kwargs:  # a signed userinfo answer, not the ID token
            return payload
        audience = payload.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        if payload.get("iss") != settings.KIONGA_OIDC_ISSUER:
            raise SuspiciousOperation("ID token from another issuer")
        if self.OIDC_RP_CLIENT_ID not in audiences:
            raise SuspiciousOperation("ID token for another client")
        return payload

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        if not isinstance(claims.get("email"), str) or "@" not in claims["email"]:
            return False
        return claims.get("email_verified") is True or \
            not settings.KIONGA_OIDC_REQUIRE_VERIFIED_EMAIL

    def filter_users_by_claims(self, claims: dict[str, Any]) -> QuerySet[User]:
        return User.objects.filter(email__iexact=claims["email"])

    def create_user(self, claims: dict[str, Any]) -> User:
        email = claims["email"].lower()
        username = email if not User.objects.filter(username=email).exists() \
            else f"{email}-{secrets.token_hex(3)}"
        user = User(username=username[:150], email=email,
                    first_name=str(claims.get("given_name") or "")[:150],
                    last_name=str(claims.get("family_name") or "")[:150])
        user.set_unusable_password()
        user.save()
        return self.update_user(user, claims)

    def update_user(self, user: User, claims: dict[str, Any]) -> User:
        if not user.is_active and InvitedAccount.objects.filter(user=user).delete()[0]:
            # Invited by this email, and the provider has verified it: no password needed.
            user.is_active = True
            user.save(update_fields=["is_active"])
        if settings.KIONGA_OIDC_GROUP_ROLES and user.is_active:
            groups = groups_of(claims, settings.KIONGA_OIDC_GROUPS_CLAIM)
            do_sync_memberships(user, settings.KIONGA_OIDC_GROUP_ROLES, groups)
        return user

    def get_user(self, user_id: int) -> User | None:
        # ModelBackend's: an account deactivated since the sign-in is signed out.
        found = ModelBackend.get_user(self, user_id)
        return found if isinstance(found, User) else None
