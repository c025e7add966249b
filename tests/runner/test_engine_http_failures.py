"""One reading of an error answer: the gateway's resources and a model server alike
(runner/resources.py: 401/403/404 denied, 429 and 5xx unavailable, other 4xx node_error)."""

from __future__ import annotations

import httpx
from hypothesis import given
from hypothesis import strategies as st

from runner import http_resources
from runner.backends import openai
from runner.failures import http_failure_code


@given(st.integers(400, 599))
def test_models_and_resources_read_a_status_the_same(status: int) -> None:
    response = httpx.Response(status, json={"error": {"code": "x", "message": "no"}})
    expected = ("resource_denied" if status in (401, 403, 404) else
                "resource_unavailable" if status == 429 or status >= 500 else "node_error")
    assert http_failure_code(status) == expected
    assert openai._http_failure(status, response.content).code == expected
    answer = http_resources._Answer(status, "application/json", response.content)
    assert http_resources._failure("models/m/predict", answer).code == expected
