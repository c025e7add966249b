from rest_framework.test import APIClient

from contracts.registry import COMPONENTS
from tests.conftest import Api

URL = "/api/v1/agent-designs/components"


def test_it_returns_the_full_registry(api: Api, bob: object) -> None:
    body = api.client_for(bob).get(URL).json()  # type: ignore[arg-type]
    kinds = [c["kind"] for c in body["components"]]
    assert kinds == list(COMPONENTS) and len(kinds) == 17
    model = next(c for c in body["components"] if c["kind"] == "model")
    assert model["label"] and model["help"]
    assert [p["name"] for p in model["outputs"]] == ["out", "error"]
    assert (model["timeout_seconds"], model["retries"]) == (60, 1)
    limit = next(
        s for c in body["components"] if c["kind"] == "knowledge" for s in c["settings"]
        if s["name"] == "limit"
    )
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 20, "4")
    assert {"from": "json", "to": "text", "description": "compact JSON"} in body["conversions"]
    assert {op["name"] for op in body["condition_operators"]} == {
        "contains", "not_contains", "equals", "matches", "longer_than", "empty", "not_empty"
    }


def test_it_needs_a_token(api: Api, db: None) -> None:
    client: APIClient = api.anon()
    api.assert_error(client.get(URL), 401, "not_authenticated")
