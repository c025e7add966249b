"""A run start answers the same refusals whether it asks for JSON (Django's WSGI
handler in a worker thread) or for the run's stream (`Accept: text/event-stream`,
Django's ASGI handler), through the real gateway: each case is asked both ways and
the answers compared: status, error body, and the headers a client or a browser
relies on. A stream is followed alike with or without a cookie beside the token."""

from typing import Any

import httpx
import pytest

from designs.starter_templates import TEMPLATES
from kionga.models import ApiToken, TokenRevocation
from tests.conftest import Api
from tests.e2e.conftest import Http
from tests.sse_frames import frames as sse_frames
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)

SSE = {"Accept": "text/event-stream"}
COOKIE = {"Cookie": "theme=dark"}
SAME_HEADERS = ("content-type", "content-security-policy", "x-content-type-options",
                "x-frame-options", "referrer-policy", "cross-origin-opener-policy",
                "www-authenticate", "retry-after")


def both(client: httpx.Client, method: str, url: str, **kwargs: Any) -> list[httpx.Response]:
    """The request as JSON and as a stream (a refusal is JSON either way)."""
    headers = kwargs.pop("headers", {})
    return [client.request(method, url, headers={**headers, **extra}, **kwargs)
            for extra in ({}, SSE)]


def assert_alike(plain: httpx.Response, streamed: httpx.Response) -> None:
    assert plain.status_code == streamed.status_code, (plain.text, streamed.text)
    for name in SAME_HEADERS:
        assert plain.headers.get(name) == streamed.headers.get(name), name
    if plain.status_code >= 400:
        assert plain.json() == streamed.json()


def test_refusals_are_the_same(stack: Stack, api: Api, alice: Any, bob: Any, mallory: Any,
                               acme: Any) -> None:
    owner = Http(stack, api.token_for(alice))
    design_id = owner.create_design(acme.pk, TEMPLATES[2]["graph"])
    broken = owner.create_design(acme.pk, {"schema_version": 2, "nodes": [], "edges": []})
    url = f"/api/v1/agent-designs/{design_id}/runs"
    cases = [
        (Http(stack, api.token_for(bob)).client, url, {"input": "hi"}),  # viewer: 403
        (Http(stack, api.token_for(mallory)).client, url, {"input": "hi"}),  # tenant: 404
        (Http(stack, "kio_" + "z" * 43).client, url, {"input": "hi"}),  # unknown: 401
        (owner.client, url, {"input": "hi", "revision": 99}),  # no revision: 404
        (owner.client, url, {"input": "hi", "stop_after": "nowhere"}),  # 400
        (owner.client, f"/api/v1/agent-designs/{broken}/runs", {"input": "hi"}),  # 422
        (owner.client, url.replace(design_id[:8], "00000000"), {"input": "hi"}),  # 404
    ]
    seen = set()
    for client, where, body in cases:
        plain, streamed = both(client, "POST", where, json=body)
        assert_alike(plain, streamed)
        seen.add(plain.status_code)
    assert seen == {400, 401, 403, 404, 422}


def test_a_token_revoked_for_the_project_is_refused_alike(stack: Stack, api: Api,
                                                          alice: Any, acme: Any) -> None:
    raw = api.token_for(alice)
    owner = Http(stack, raw)
    design_id = owner.create_design(acme.pk, TEMPLATES[2]["graph"])
    TokenRevocation.objects.create(token=ApiToken.objects.get(prefix=raw[:8]), project=acme)
    plain, streamed = both(owner.client, "POST", f"/api/v1/agent-designs/{design_id}/runs",
                           json={"input": "hi"})
    assert_alike(plain, streamed)
    assert plain.status_code == 404


def test_a_token_made_from_one_revoked_for_the_project_is_refused_alike(
        stack: Stack, api: Any, alice: Any, carol: Any, acme: Any) -> None:
    admin = Http(stack, api.token_for(alice))
    design_id = admin.create_design(acme.pk, TEMPLATES[2]["graph"])
    run_id = admin.start(design_id, input="hi").json()["id"]
    raw = api.token_for(carol)
    leaked = Http(stack, raw)
    before = leaked.client.post("/api/v1/me/tokens", json={"name": "before"})
    leaked_id = ApiToken.objects.get(prefix=raw[:8]).pk
    # Used in acme, so acme's admins see it (kionga.token_use) and may revoke it there.
    assert leaked.client.get(f"/api/v1/projects/{acme.pk}/members").status_code == 200
    revoked = admin.client.delete(f"/api/v1/projects/{acme.pk}/tokens/{leaked_id}")
    assert revoked.status_code == 204
    after = leaked.client.post("/api/v1/me/tokens", json={"name": "after"})
    for made in (before, after):
        assert made.status_code == 201, made.text
        child = Http(stack, made.json()["token"]).client
        for method, url, extra in (
                ("POST", f"/api/v1/agent-designs/{design_id}/runs", {"json": {"input": "hi"}}),
                ("GET", f"/api/v1/agent-designs/{design_id}/runs/{run_id}/events", {})):
            plain, streamed = both(child, method, url, **extra)
            assert_alike(plain, streamed)
            assert plain.status_code == 404


def test_started_runs_are_followed_alike(stack: Stack, api: Api, alice: Any,
                                        acme: Any) -> None:
    owner = Http(stack, api.token_for(alice))
    design_id = owner.create_design(acme.pk, TEMPLATES[2]["graph"])
    answers = [owner.client.post(f"/api/v1/agent-designs/{design_id}/runs",
                                 json={"input": "hi"}, headers=extra) for extra in ({}, COOKIE)]
    assert [a.status_code for a in answers] == [201, 201]
    assert set(answers[0].json()) == set(answers[1].json())
    assert answers[0].json()["status"] == "queued" and answers[0].json()["input"] == "hi"
    for answer in answers:  # both run to the end, followed with and without a cookie
        events_url = f"/api/v1/agent-designs/{design_id}/runs/{answer.json()['id']}/events"
        streams = []
        for extra in ({}, COOKIE):
            with owner.client.stream("GET", events_url, headers={**SSE, **extra}) as stream:
                assert stream.status_code == 200
                assert stream.headers["content-type"].startswith("text/event-stream")
                streams.append([(k, d) for k, d, _ in sse_frames(stream.iter_lines())
                                if k != "delta"])
        assert streams[0] == streams[1]
        assert streams[0][-1][0] == "run.completed"


def test_stream_refusals_are_the_same(stack: Stack, api: Api, alice: Any, mallory: Any,
                                      acme: Any) -> None:
    owner = Http(stack, api.token_for(alice))
    design_id = owner.create_design(acme.pk, TEMPLATES[2]["graph"])
    run_id = owner.start(design_id, input="hi").json()["id"]
    url = f"/api/v1/agent-designs/{design_id}/runs/{run_id}/events"
    for client in (Http(stack, api.token_for(mallory)).client,
                   Http(stack, "kio_" + "z" * 43).client):
        plain, streamed = both(client, "GET", url)
        assert_alike(plain, streamed)
        assert plain.status_code in (401, 404)


def test_unusual_starts(stack: Stack, api: Api, alice: Any, acme: Any) -> None:
    owner = Http(stack, api.token_for(alice))
    design_id = owner.create_design(acme.pk, TEMPLATES[2]["graph"])
    url = f"/api/v1/agent-designs/{design_id}/runs"
    key = {"Idempotency-Key": "same-start"}
    first = owner.client.post(url, json={"input": "hi"}, headers=key)
    again = owner.client.post(url, json={"input": "hi"}, headers=key)
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["id"] == again.json()["id"]
    bad_host = owner.client.post(url, json={"input": "hi"}, headers={"Host": "evil.example"})
    assert bad_host.status_code == 400
    not_json = owner.client.post(url, content=b"input=hi",
                                 headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert not_json.status_code == 415
    jsonx = owner.client.post(url, content=b'{"input": "hi"}',
                              headers={"Content-Type": "application/jsonx", **SSE})
    assert jsonx.status_code == 415
    nul = owner.client.post(url + "?x=%00", json={"input": "hi"}, headers=SSE)
    assert nul.status_code == 400, nul.text
    # A header name with an underscore is no header (as Django's ASGI handler and
    # proxies drop it): not an Idempotency-Key, whichever handler serves the start.
    underscore = {"Idempotency_Key": "same-start-2"}
    twice = [owner.client.post(url, json={"input": "hi"}, headers=underscore)
             for _ in range(2)]
    assert [a.status_code for a in twice] == [201, 201]
    assert twice[0].json()["id"] != twice[1].json()["id"]
