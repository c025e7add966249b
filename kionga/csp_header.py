"""django-csp's middleware, with the policy headers built once per policy setting.

django-csp builds the Content-Security-Policy header from settings for every answer
(its policy parts copied with dataclasses.asdict, the directives copied, sorted and
joined, for the policy and again for the report-only one): ~30 µs of CPU a request,
the costliest middleware of an API call. An answer that carries nothing of its own
(no nonce used, none of django-csp's per-view decorators) gets the policy of the
settings alone, so that header is built once per value of the settings (csp.utils.build_policy,
django-csp's own builder; a changed setting, override_settings included, builds it
anew) and set as django-csp sets it: only when the answer has none. Anything else, a nonce,
a decorator's parts or excluded URL prefixes, goes through django-csp's own
process_response.
"""

from __future__ import annotations

import copy
import http.client
import threading
from typing import Any, Final

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, CSPMiddleware
from csp.utils import build_policy
from django.conf import settings
from django.http import HttpRequest, HttpResponseBase

# What django-csp's decorators set on an answer (csp.decorators).
_OWN_PARTS: Final = ("_csp_config", "_csp_update", "_csp_replace", "_csp_exempt",
                     "_csp_config_ro", "_csp_update_ro", "_csp_replace_ro", "_csp_exempt_ro")
_DEBUG_EXEMPT: Final = (http.client.INTERNAL_SERVER_ERROR, http.client.NOT_FOUND)

# (a copy of each setting, their headers): compared by value, so a setting changed in
# place builds the headers anew too.
_built: tuple[Any, Any, str, str] | None = None
_lock = threading.Lock()


class PolicyOnceMiddleware(CSPMiddleware):
    def process_response(self, request: HttpRequest,
                         response: HttpResponseBase) -> HttpResponseBase:
        headers = _settings_headers()
        if (headers is None or getattr(request, "_csp_nonce", None) is not None
                or any(hasattr(response, name) for name in _OWN_PARTS)):
            return super().process_response(request, response)
        if response.status_code in _DEBUG_EXEMPT and settings.DEBUG:
            return response
        policy, report_only = headers
        if policy and HEADER not in response:
            response[HEADER] = policy
        if report_only and HEADER_REPORT_ONLY not in response:
            response[HEADER_REPORT_ONLY] = report_only
        # As django-csp: a nonce asked for after the header was written is an error.
        request.csp_nonce = CheckableLazyObject(  # type: ignore[attr-defined]
            self._csp_nonce_post_response)
        return response


def _settings_headers() -> tuple[str, str] | None:
    """(policy, report-only policy) of the settings ("" for none), or None when a
    setting excludes URL prefixes (django-csp decides per path then)."""
    global _built
    policy = getattr(settings, "CONTENT_SECURITY_POLICY", None)
    report_only = getattr(settings, "CONTENT_SECURITY_POLICY_REPORT_ONLY", None)
    if any((setting or {}).get("EXCLUDE_URL_PREFIXES") for setting in (policy, report_only)):
        return None
    built = _built
    if built is None or built[0] != policy or built[1] != report_only:
        with _lock:
            built = _built = (copy.deepcopy(policy), copy.deepcopy(report_only),
                              build_policy(), build_policy(report_only=True))
    return built[2], built[3]
