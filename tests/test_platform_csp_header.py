"""The Content-Security-Policy header (kionga.csp_header, built once per value of the
settings) follows the settings when they change, and an answer with policy parts of
its own (django-csp's decorators, a nonce) still gets django-csp's own policy."""

from __future__ import annotations

from typing import Any

import pytest
from csp.constants import NONCE, SELF
from csp.middleware import CSPMiddleware
from django.http import HttpResponse, HttpResponseBase
from django.test import Client, RequestFactory

from kionga.csp_header import PolicyOnceMiddleware

pytestmark = pytest.mark.django_db
CSP = "Content-Security-Policy"


def answered(middleware: CSPMiddleware, request: Any = None) -> HttpResponseBase:
    response = middleware(request or RequestFactory().get("/"))
    assert isinstance(response, HttpResponseBase)
    return response


def directives(header: str) -> dict[str, str]:
    return dict(part.split(" ", 1) for part in header.split("; "))


def test_a_changed_setting_changes_the_header(settings: Any) -> None:
    before = Client().get("/healthz")[CSP]
    assert "script-src 'self'" in before
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"default-src": ["'none'"]}}
    assert directives(Client().get("/healthz")[CSP]) == {"default-src": "'none'"}
    settings.CONTENT_SECURITY_POLICY["DIRECTIVES"]["img-src"] = ["'self'"]  # in place
    assert directives(Client().get("/healthz")[CSP]) == {"default-src": "'none'",
                                                         "img-src": "'self'"}
    settings.CONTENT_SECURITY_POLICY_REPORT_ONLY = {"DIRECTIVES": {"script-src": ["'none'"]}}
    report_only = Client().get("/healthz")["Content-Security-Policy-Report-Only"]
    assert directives(report_only)["script-src"] == "'none'"


@pytest.mark.parametrize("parts", [{"_csp_update": {"img-src": ["https://cdn.example"]}},
                                   {"_csp_replace": {"script-src": ["'none'"]}},
                                   {"_csp_exempt": True}, {}])
def test_answers_with_parts_of_their_own_get_django_csps_policy(parts: dict[str, Any]) -> None:
    def answer(request: Any) -> HttpResponse:
        response = HttpResponse("page")
        for name, value in parts.items():
            setattr(response, name, value)
        return response

    ours = answered(PolicyOnceMiddleware(answer))
    theirs = answered(CSPMiddleware(answer))
    assert ours.get(CSP) == theirs.get(CSP)


def test_a_page_that_used_a_nonce_gets_it_in_its_header(settings: Any) -> None:
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"script-src": [SELF, NONCE]}}

    def page(request: Any) -> HttpResponse:
        return HttpResponse(f"<script nonce='{request.csp_nonce}'></script>")

    request = RequestFactory().get("/")
    response = answered(PolicyOnceMiddleware(page), request)
    nonce = request._csp_nonce  # type: ignore[attr-defined]
    assert directives(response[CSP])["script-src"] == f"'self' 'nonce-{nonce}'"
    # Without a nonce used, the settings' policy (its NONCE placeholder left out).
    plain = answered(PolicyOnceMiddleware(lambda r: HttpResponse()))
    assert directives(plain[CSP])["script-src"] == "'self'"
