"""Fuzz the designs routes from our own OpenAPI document: no request may produce a 5xx."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import pytest
import schemathesis
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.designs_helpers import make_design
from tests.openapi_check import openapi_document

OPERATIONS = [
    ("/api/v1/agent-designs/validate", "POST"),
    ("/api/v1/agent-designs/{design_id}/validate", "POST"),
    ("/api/v1/agent-designs", "POST"),
    ("/api/v1/agent-designs", "GET"),
    ("/api/v1/agent-designs/{design_id}", "PUT"),
]


@pytest.mark.parametrize(("path", "method"), OPERATIONS)
def test_it_never_answers_5xx(api: Any, alice: Any, acme: Any, path: str, method: str) -> None:
    schema = schemathesis.openapi.from_dict(openapi_document("kionga.urls"))
    operation = schema[path][method]
    design_id = str(make_design(alice, acme).pk)
    token = api.token_for(alice)
    client = Client()

    @settings(max_examples=120, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(case=operation.as_strategy(), use_real_ids=st.booleans(), raw=st.booleans())
    def check(case: Any, use_real_ids: bool, raw: bool) -> None:
        params = dict(case.path_parameters or {})
        if use_real_ids and "design_id" in params:
            params["design_id"] = design_id
        url = path.format(**params) if params else path
        if case.query:
            url += "?" + urlencode(case.query, doseq=True)
        body = case.body if not isinstance(case.body, type(schemathesis.core.NOT_SET)) else None
        payload = _encode(body, raw)
        response = client.generic(method, url, payload, content_type="application/json",
                                  HTTP_AUTHORIZATION=f"Bearer {token}")
        assert response.status_code < 500, (method, url, payload[:500], response.content[:500])
        assert response["Content-Type"].startswith("application/json")

    check()


def _encode(body: Any, raw: bool) -> str:
    # Half the time send the document; else a truncated or otherwise broken text.
    text = json.dumps(body, default=str) if body is not None else ""
    return text[: len(text) // 2] if raw and text else text
