"""The two pages of a sign-in through the provider: /oidc/authenticate/ sends the browser
to the provider (with state, nonce and PKCE), /oidc/callback/ signs the person in
(kionga.oidc_backend) and goes on to ``next`` or the designer. Both are 404 while
KIONGA_OIDC_ISSUER is empty."""

from __future__ import annotations

import logging

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.template.loader import render_to_string
from mozilla_django_oidc import views as library

from kionga import oidc

logger = logging.getLogger(__name__)

# Where a refused sign-in lands: the sign-in page, which then says so.
REFUSED_URL = "/?provider=refused"


class _Start(library.OIDCAuthenticationRequestView):  # type: ignore[misc]
    get_settings = staticmethod(oidc.library_setting)


class _Callback(library.OIDCAuthenticationCallbackView):  # type: ignore[misc]
    get_settings = staticmethod(oidc.library_setting)

    @property
    def failure_url(self) -> str:
        return REFUSED_URL

    def login_success(self) -> HttpResponseBase:
        answer: HttpResponseBase = super().login_success()
        # The provider is asked again at least this often (docs/decisions/oidc-sign-in.md).
        self.request.session.set_expiry(settings.KIONGA_OIDC_SESSION_HOURS * 3600)
        return answer


_start = _Start.as_view()
_callback = _Callback.as_view()


def start(request: HttpRequest) -> HttpResponseBase:
    if not oidc.enabled():
        raise Http404("Sign-in with a provider is not configured.")
    try:
        return _start(request)
    except oidc.ProviderUnavailable as exc:
        return _unavailable(exc)


def callback(request: HttpRequest) -> HttpResponseBase:
    if not oidc.enabled():
        raise Http404("Sign-in with a provider is not configured.")
    try:
        return _callback(request)
    except oidc.ProviderUnavailable as exc:
        return _unavailable(exc)


def _unavailable(reason: oidc.ProviderUnavailable) -> HttpResponse:
    logger.warning("the OpenID Connect provider is unavailable: %s", reason)
    message = f"{oidc.provider_name()} cannot be reached; sign in with your password, or " \
              "try again later."
    return HttpResponse(render_to_string("kionga/unavailable.html", {"message": message}),
                        status=503)
