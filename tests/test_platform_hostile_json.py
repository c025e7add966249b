"""JSON the platform cannot hold (lone surrogates in strings or keys, 1e999, NaN,
nesting past the depth bound, NUL) is 400 invalid_json on every JSON route, public
and internal, never a 500; on a validate route it is 400 invalid_document in the
issue shape, as a body that is not JSON at all is (tests/test_designs_validate_refused_json.py)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.test import Client, override_settings
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from approvals.models import ApprovalRequest
from kionga.parsers import MAX_JSON_DEPTH
from kionga.resource_models import ApiConnection, KnowledgeBase, ModelEndpoint
from runs.models import Run
from tests.designs_helpers import make_design
from tests.internal_helpers import start_run

HOLE = "@"  # where a template takes the hostile value

ATOMS = ['"\\ud800"', '"a\\udfffb"', '"\\udc00\\ud800"', "1e999", "-1e999", "NaN",
         "Infinity", "-Infinity", '"\\u0000"', '{"\\ud83d": 1}', '{"\\u0000": true}']


def deep(levels: int, opener: str) -> str:
    closer = "]" if opener == "[" else "}"
    inner = "[" if opener == "[" else '{"k":'
    return (inner * levels) + "0" + (closer * levels)


hostile = st.one_of(
    st.sampled_from(ATOMS),
    st.builds(deep, st.integers(MAX_JSON_DEPTH + 1, 5000), st.sampled_from(["[", "{"])),
    st.builds(lambda text, atom: f'[{text!r}, {atom}]'.replace("'", '"'),
              st.text(alphabet="abc xyz", max_size=5), st.sampled_from(ATOMS)),
)

# The validate routes answer invalid_document (tests/test_designs_validate_refused_json.py).
PUBLIC = [
    ("post", "/api/v1/agent-designs", '{"project_id": {acme}, "name": @}'),
    ("put", "/api/v1/agent-designs/{design}", '{"revision": 1, "graph": {"nodes": @}}'),
    ("post", "/api/v1/agent-designs/{design}/runs",
     '{"input": "hi", "history": [{"role": "user", "content": @}]}'),
    ("post", "/api/v1/agent-approvals/{approval}/decision",
     '{"decision": "approve", "comment": @}'),
]

INTERNAL = [
    "models/gpt/predict", '{"messages": [{"role": "user", "content": @}]}',
    "functions/word_count/invoke", '{"input": @}',
    "agent-api-connections/c/invoke", '{"method": "POST", "path": "/x", "body": @}',
    "knowledge-bases/kb/search", '{"query": @}',
    "agent-approvals", '{"node_id": "gate", "message": "ok?", "timeout_seconds": 60, '
                       '"preview": @}',
]


def fill(template: str, value: str, **ids: Any) -> str:
    for name, found in ids.items():
        template = template.replace("{" + name + "}", str(found))
    return template.replace(HOLE, value)


def assert_invalid_json(response: Any, context: Any) -> None:
    assert response.status_code == 400, (context, response.content[:300])
    error = response.json()["error"]
    assert error["code"] == "invalid_json", (context, error)
    assert error["message"], context


def test_it_refuses_hostile_json_on_every_public_route(
    api: Any, alice: Any, acme: Any, runner_configured: Any, rds: Any
) -> None:
    design = make_design(alice, acme)
    run = Run.objects.create(project=acme, design=design, revision=1, content_sha256="x" * 64,
                             created_by=alice)
    approval = ApprovalRequest.objects.create(project=acme, run=run, node_id="gate",
                                              expires_at=timezone.now() + timedelta(minutes=5))
    ids = {"acme": acme.pk, "design": design.pk, "approval": approval.pk}
    client, token = Client(), api.token_for(alice)

    @settings(max_examples=60, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(value=hostile, route=st.sampled_from(PUBLIC))
    def check(value: str, route: tuple[str, str, str]) -> None:
        method, path, template = route
        url, body = fill(path, "", **ids), fill(template, value, **ids)
        response = client.generic(method.upper(), url, body, content_type="application/json",
                                  HTTP_AUTHORIZATION=f"Bearer {token}")
        assert_invalid_json(response, (method, url, body[:200]))

    check()


@override_settings(ROOT_URLCONF="kionga.internal_urls")
def test_it_refuses_hostile_json_on_every_internal_route(alice: Any, acme: Any) -> None:
    # The routes look their resource up before they read the body.
    ModelEndpoint.objects.create(project=acme, key="gpt", base_url="http://127.0.0.1:9",
                                 model_name="m")
    ApiConnection.objects.create(project=acme, key="c", base_url="http://127.0.0.1:9")
    KnowledgeBase.objects.create(project=acme, key="kb")
    _run, credential = start_run(alice, acme)  # its graph names every resource above
    client = Client()
    routes = list(zip(INTERNAL[::2], INTERNAL[1::2], strict=True))

    @settings(max_examples=50, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(value=hostile, route=st.sampled_from(routes))
    def check(value: str, route: tuple[str, str]) -> None:
        path, template = route
        body = fill(template, value)
        response = client.post("/api/v1/" + path, body, content_type="application/json",
                               HTTP_AUTHORIZATION=f"Bearer {credential}")
        assert_invalid_json(response, (path, body[:200]))

    check()


SAYS = {
    '{"name": "\\ud800"}': "lone surrogates",
    '{"name": "x", "x": 1e999}': "too large",
    '{"name": "x", "x": NaN}': "NaN",
    "[" * 1000 + "]" * 1000: f"nested more than {MAX_JSON_DEPTH} levels",
}


def test_it_says_what_is_wrong(api: Any, alice: Any) -> None:
    client = api.client_for(alice)
    for body, words in SAYS.items():
        response = client.generic("POST", "/api/v1/agent-designs", body,
                                  content_type="application/json")
        error = api.assert_error(response, 400, "invalid_json")
        assert words in error["message"], (body[:50], error)


def test_it_accepts_json_within_the_bounds(api: Any, alice: Any) -> None:
    nested = "[" * (MAX_JSON_DEPTH - 2) + "1.5e300" + "]" * (MAX_JSON_DEPTH - 2)
    body = '{"nodes": [], "edges": [], "x": ' + nested + ', "name": "\\ud83d\\ude00"}'
    response = api.client_for(alice).generic("POST", "/api/v1/agent-designs/validate", body,
                                             content_type="application/json")
    # Not a graph (no nodes), so issues in a 200 report: the body itself was accepted.
    assert response.status_code == 200, response.content
