"""The validate routes answer every body the JSON parser refuses in the issue shape:
400 invalid_document with one invalid_document issue saying what is wrong — a body that
is not JSON at all, and JSON the platform cannot hold (nesting past the limit, a lone
surrogate, a non-finite number, NUL) alike. Other routes answer the latter
invalid_json (tests/test_platform_hostile_json.py)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kionga.parsers import MAX_JSON_DEPTH
from tests.designs_helpers import make_design
from tests.test_platform_hostile_json import fill, hostile

TEMPLATES = ['{"nodes": [], "edges": [], "name": @}', '{"nodes": [@], "edges": []}']
SAYS = {
    '{"nodes": [], "edges": [], "name": "\\ud800"}': "lone surrogates",
    '{"nodes": [], "edges": [], "x": 1e999}': "too large",
    '{"nodes": [], "edges": [], "x": NaN}': "NaN",
    '{"nodes": [], "edges": [], "x": "a\\u0000"}': "NUL",
    "[" * 1000 + "]" * 1000: f"nested more than {MAX_JSON_DEPTH} levels",
    '{"nodes": [': "not valid JSON",
    "not json": "not valid JSON",
    b"\xff\xfe{}": "not UTF-8",
}


def validate_urls(design: Any) -> list[str]:
    return ["/api/v1/agent-designs/validate", f"/api/v1/agent-designs/{design.pk}/validate"]


def issue_of(api: Any, response: Any) -> dict[str, Any]:
    """The one issue of a 400 invalid_document answer."""
    error = api.assert_error(response, 400, "invalid_document")
    [issue] = error["details"]["issues"]
    assert issue["code"] == "invalid_document" and issue["severity"] == "error", issue
    assert error["message"] == issue["message"]
    return dict(issue)


def test_it_says_what_is_wrong_with_the_body_in_an_issue(api: Any, alice: Any,
                                                         acme: Any) -> None:
    client = api.client_for(alice)
    for url in validate_urls(make_design(alice, acme)):
        for body, words in SAYS.items():
            response = client.generic("POST", url, body, content_type="application/json")
            assert words in issue_of(api, response)["message"], (url, body[:50])


def test_any_refused_json_gets_the_issue_shape(api: Any, alice: Any, acme: Any) -> None:
    client = api.client_for(alice)
    urls = validate_urls(make_design(alice, acme))

    @settings(max_examples=40, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(value=hostile, url=st.sampled_from(urls), template=st.sampled_from(TEMPLATES))
    def check(value: str, url: str, template: str) -> None:
        response = client.generic("POST", url, fill(template, value),
                                  content_type="application/json")
        issue_of(api, response)

    check()
