"""Send one schemathesis case to the API in-process and check the answer's contract:
never a 5xx, always JSON, and every invalid_request names its fields."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import schemathesis
from django.test import Client


def encode(body: Any, raw: bool) -> str:
    # Half the time send the document; else a truncated or otherwise broken text.
    text = json.dumps(body, default=str) if body is not None else ""
    return text[: len(text) // 2] if raw and text else text


def send_and_check(client: Client, method: str, path: str, case: Any,
                   params: dict[str, Any], token: str, raw: bool) -> None:
    url = path.format(**params) if params else path
    if case.query:
        url += "?" + urlencode(case.query, doseq=True)
    body = case.body if not isinstance(case.body, type(schemathesis.core.NOT_SET)) else None
    payload = encode(body, raw)
    response = client.generic(method, url, payload, content_type="application/json",
                              HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code < 500, (method, url, payload[:500], response.content[:500])
    if response.status_code == 204:
        return
    assert response["Content-Type"].startswith("application/json")
    error = response.json().get("error") if response.status_code >= 400 else None
    if error and error["code"] == "invalid_request":  # the one documented shape
        assert set(error["details"]) == {"fields"} and error["details"]["fields"], error
