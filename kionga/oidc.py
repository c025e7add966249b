"""Sign-in with the company's OpenID Connect provider (mozilla-django-oidc), configured
from KIONGA_OIDC_* (docs/configuration.md); off while KIONGA_OIDC_ISSUER is empty.

The provider's endpoints come from its discovery document
(``{issuer}/.well-known/openid-configuration``), read when a sign-in first needs them and
kept for DISCOVERY_TTL; a provider that cannot be reached makes that one sign-in fail
with a page that says so, never the local sign-in. The library reads each endpoint
through ``get_settings``; ``library_setting`` answers those names from here.
See docs/decisions/oidc-sign-in.md.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Final

import httpx
from django.conf import settings
from mozilla_django_oidc.utils import import_from_settings

DISCOVERY_TTL: Final = 3600.0
DISCOVERY_TIMEOUT: Final = 10.0
# The library's setting name -> the discovery document's field.
_DISCOVERED: Final = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "authorization_endpoint",
    "OIDC_OP_TOKEN_ENDPOINT": "token_endpoint",
    "OIDC_OP_USER_ENDPOINT": "userinfo_endpoint",
    "OIDC_OP_JWKS_ENDPOINT": "jwks_uri",
}


class ProviderUnavailable(Exception):
    """The provider's discovery document could not be read or does not fit."""


def enabled() -> bool:
    return bool(settings.KIONGA_OIDC_ISSUER)


def provider_name() -> str:
    return str(settings.KIONGA_OIDC_PROVIDER_NAME)


_lock = threading.Lock()
_cache: dict[str, tuple[float, dict[str, Any]]] = {}


def discovery() -> dict[str, Any]:
    """The provider's discovery document (cached per process for DISCOVERY_TTL)."""
    issuer = settings.KIONGA_OIDC_ISSUER
    with _lock:
        found = _cache.get(issuer)
        if found and found[0] > time.monotonic():
            return found[1]
    document = _fetch(issuer)
    with _lock:
        _cache[issuer] = (time.monotonic() + DISCOVERY_TTL, document)
    return document


def forget_discovery() -> None:
    with _lock:
        _cache.clear()


def _fetch(issuer: str) -> dict[str, Any]:
    url = issuer.rstrip("/") + "/.well-known/openid-configuration"
    try:
        answer = httpx.get(url, timeout=DISCOVERY_TIMEOUT)
        answer.raise_for_status()
        document = answer.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise ProviderUnavailable(f"{url}: {exc}") from None
    if not isinstance(document, dict):
        raise ProviderUnavailable(f"{url} is not a JSON object")
    # OpenID Connect Discovery 1.0 §4.3: the document's issuer is exactly the one asked.
    if document.get("issuer") != issuer:
        raise ProviderUnavailable(f"{url} names issuer {document.get('issuer')!r}, "
                                  f"not {issuer!r}")
    missing = [field for field in _DISCOVERED.values() if not document.get(field)]
    if missing:
        raise ProviderUnavailable(f"{url} lacks {', '.join(missing)}")
    return document


def library_setting(name: str, *default: Any) -> Any:
    """mozilla-django-oidc's settings: endpoints from discovery, the rest from Django's."""
    if name in _DISCOVERED:
        return discovery()[_DISCOVERED[name]]
    return import_from_settings(name, *default)
