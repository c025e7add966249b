"""One matrix of edge and hostile requests against every route of the OpenAPI document,
over real HTTP against the Procfile's gateway line behind a TLS proxy
(DJANGO_SECURE_PROXY_SSL_HEADER, DJANGO_SSL_REDIRECT, DJANGO_HSTS_SECONDS on).

Every route passes the same rules (docs/decisions/one-path-for-every-request.md), so
the same case gets the same answer on every route: status, error code and the headers
a client or a browser relies on (HSTS behind TLS, nosniff, the 401 challenge,
`Connection: close` after a refused body). Cases whose answer depends on the route (a
wrong content type, a chunked body, HEAD, OPTIONS) are held to the route's own
ordinary answer. No case may make a 5xx.
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.utils import timezone

from contracts.registry import CEILINGS
from kionga.models import ApiToken
from kionga.tokens import create_token
from tests.openapi_check import openapi_document
from tests.test_platform_request_limits import procfile_gateway

pytestmark = pytest.mark.django_db(transaction=True)  # the gateway has its own connection

METHODS = ("get", "post", "put", "patch", "delete")
PLACEHOLDER = re.compile(r"\{(\w+)\}")
# A value of each path parameter's type: the route resolves, the object does not exist.
SAMPLE = {"uuid": str(uuid.UUID(int=1)), "integer": "987654321", "string": "x"}
BODY_TIMEOUT = 2
HTTPS = {"X-Forwarded-Proto": "https"}
HSTS = "max-age=3600; includeSubDomains; preload"


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    protected: bool  # an anonymous caller is refused
    has_body: bool  # the operation documents a request body


def routes() -> list[Route]:
    doc = openapi_document(str(settings.ROOT_URLCONF))
    found = []
    for template, item in doc["paths"].items():
        for method, operation in item.items():
            if method not in METHODS:
                continue
            kinds = {p["name"]: p["schema"].get("format", p["schema"]["type"])
                     for p in operation.get("parameters", []) if p["in"] == "path"}
            path = PLACEHOLDER.sub(partial(_sample, kinds), template)
            found.append(Route(method.upper(), path, {} not in operation.get("security", [{}]),
                               "requestBody" in operation))
    return found


def _sample(kinds: dict[str, str], placeholder: re.Match[str]) -> str:
    return SAMPLE[kinds[placeholder[1]]]


ROUTES = routes()


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def code(self) -> str | None:
        try:
            return str(json.loads(self.body)["error"]["code"])
        except (ValueError, KeyError, TypeError):
            return None


@dataclass
class Request:
    method: str
    target: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    chunks: list[bytes] | None = None  # sent with Transfer-Encoding: chunked
    content_length: int | None = None  # sent as is, whatever the body


def ask(base: str, request: Request) -> Answer:
    url = urlsplit(base)
    connection = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port,
                                            timeout=BODY_TIMEOUT + 20)
    try:
        connection.putrequest(request.method, request.target, skip_host=True,
                              skip_accept_encoding=True)
        headers = {"Host": "127.0.0.1", **request.headers}
        if request.chunks is not None:
            headers["Transfer-Encoding"] = "chunked"
        elif request.content_length is not None:
            headers["Content-Length"] = str(request.content_length)
        elif request.body is not None:
            headers["Content-Length"] = str(len(request.body))
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.endheaders()
        try:
            if request.chunks is not None:
                for chunk in request.chunks:
                    connection.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                connection.send(b"0\r\n\r\n")
            elif request.body is not None:
                connection.send(request.body)
        except OSError:
            pass  # refused before the whole body was sent: the answer is waiting
        response = connection.getresponse()
        body = response.read() if request.method != "HEAD" else b""
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()},
                      body)
    finally:
        connection.close()


@pytest.fixture(scope="module")
def gateway(django_db_setup: Any, django_db_blocker: Any) -> Iterator[str]:
    with procfile_gateway(DJANGO_SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto",
                          DJANGO_SSL_REDIRECT="true", DJANGO_HSTS_SECONDS="3600",
                          KIONGA_BODY_TIMEOUT_SECONDS=str(BODY_TIMEOUT),
                          KIONGA_THROTTLE_USER="1000000/minute",
                          KIONGA_THROTTLE_ANON="1000000/minute") as base:
        yield base


@dataclass
class Tokens:
    valid: str
    revoked: str
    expired: str


@pytest.fixture
def tokens(alice: User) -> Tokens:
    revoked, raw_revoked = create_token(alice, "revoked")
    ApiToken.objects.filter(pk=revoked.pk).update(revoked=True)
    expired, raw_expired = create_token(alice, "expired")
    ApiToken.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(hours=1))
    return Tokens(create_token(alice, "matrix")[1], raw_revoked, raw_expired)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def json_body(route: Route) -> bytes | None:
    return b"{}" if route.has_body or route.method in ("POST", "PUT", "PATCH") else None


def each(base: str, chosen: list[Route], build: Callable[[Route], Request],
         workers: int = 8) -> dict[Route, Answer]:
    with ThreadPoolExecutor(max_workers=workers) as pool:
        answers = list(pool.map(lambda r: ask(base, build(r)), chosen))
    for route, answer in zip(chosen, answers, strict=True):
        assert answer.status < 500, (route, answer)
    return dict(zip(chosen, answers, strict=True))


def uniform(answers: dict[Route, Answer], status: int, code: str | None,
            headers: dict[str, str]) -> None:
    """Every route answered `status` with error `code` and these header values."""
    seen: dict[tuple[int, str | None], list[Route]] = defaultdict(list)
    for route, answer in answers.items():
        seen[(answer.status, answer.code)].append(route)
        for name, value in headers.items():
            assert answer.headers.get(name) == value, (route, name, answer)
    assert set(seen) == {(status, code)}, {k: v[:3] for k, v in seen.items()}


def test_the_matrix_covers_every_route() -> None:
    assert len(ROUTES) > 50
    assert Route("POST", f"/api/v1/agent-designs/{SAMPLE['uuid']}/runs", True, True) in ROUTES
    assert any(r.path.endswith("/events") for r in ROUTES)


def test_the_same_refusal_on_every_route(gateway: str, tokens: Tokens) -> None:
    protected = [r for r in ROUTES if r.protected]
    secure = {"strict-transport-security": HSTS, "x-content-type-options": "nosniff"}
    challenge = {**secure, "www-authenticate": 'Bearer realm="api"'}

    def asked(headers: dict[str, str], suffix: str = "",
              path: Callable[[str], str] = lambda p: p) -> Callable[[Route], Request]:
        return lambda r: Request(r.method, path(r.path) + suffix, {**HTTPS, **headers},
                                 json_body(r))

    for token in (tokens.revoked, tokens.expired, "kio_" + "z" * 43, "not-a-token"):
        uniform(each(gateway, protected, asked(bearer(token))), 401, "invalid_token",
                challenge)
    uniform(each(gateway, protected, asked({})), 401, "not_authenticated", challenge)
    valid = bearer(tokens.valid)
    # A NUL in the query or the path: 400 before any lookup, on every route.
    uniform(each(gateway, ROUTES, asked(valid, "?x=%00")), 400, "invalid_request", secure)
    uniform(each(gateway, ROUTES, asked(valid, "?%00=1")), 400, "invalid_request", secure)
    uniform(each(gateway, ROUTES, asked(valid, path=lambda p: p + "%00")), 400,
            "invalid_request", secure)
    # A path that is not UTF-8 names no route.
    uniform(each(gateway, ROUTES, asked(valid, path=lambda p: p + "%ff")), 404, "not_found",
            secure)
    # Another host: refused before any route.
    uniform(each(gateway, ROUTES, asked({**valid, "Host": "evil.example"})), 400,
            "invalid_request", {"x-content-type-options": "nosniff"})


def test_plain_http_is_sent_to_https_on_every_route(gateway: str, tokens: Tokens) -> None:
    answers = each(gateway, ROUTES, lambda r: Request(r.method, r.path, bearer(tokens.valid),
                                                      json_body(r)))
    for route, answer in answers.items():
        assert answer.status == 301, (route, answer)
        assert answer.headers["location"] == f"https://127.0.0.1{route.path}", route


def test_bodies_past_the_limit_or_too_slow_are_refused_alike(gateway: str,
                                                             tokens: Tokens) -> None:
    limit = CEILINGS["max_body_bytes"]
    headers = {**HTTPS, **bearer(tokens.valid), "Content-Type": "application/json"}
    closed = {"strict-transport-security": HSTS, "x-content-type-options": "nosniff",
              "connection": "close"}
    uniform(each(gateway, ROUTES, lambda r: Request(r.method, r.path, headers,
                                                    content_length=limit + 1)),
            413, "payload_too_large", closed)
    big = [b"x" * (64 * 1024)] * (limit // (64 * 1024) + 1)
    uniform(each(gateway, ROUTES, lambda r: Request(r.method, r.path, headers, chunks=big)),
            413, "payload_too_large", closed)
    # Dripped: a byte, then nothing; every route's client waits at once.
    uniform(each(gateway, ROUTES, lambda r: Request(r.method, r.path, headers, body=b"{",
                                                    content_length=100), workers=len(ROUTES)),
            408, "request_timeout", closed)


def test_route_dependent_cases_answer_as_the_route_does(gateway: str, tokens: Tokens) -> None:
    """A chunked body is the same body; HEAD is GET without the body; OPTIONS describes
    the route; a body that is not the API's JSON is 415, or the route's own refusal
    when it refuses before reading one (another tenant's object: 404)."""
    valid = {**HTTPS, **bearer(tokens.valid)}
    json_type = {**valid, "Content-Type": "application/json"}
    plain = each(gateway, ROUTES, lambda r: Request(r.method, r.path, json_type,
                                                    json_body(r)))
    chunked = each(gateway, ROUTES, lambda r: Request(
        r.method, r.path, json_type, chunks=[b"{", b"}"] if json_body(r) else None))
    assert [r for r in ROUTES if (chunked[r].status, chunked[r].code)
            != (plain[r].status, plain[r].code)] == []
    gets = [r for r in ROUTES if r.method == "GET"]
    heads = each(gateway, gets, lambda r: Request("HEAD", r.path, valid))
    assert [(r.path, heads[r].status, plain[r].status) for r in gets
            if heads[r].status != plain[r].status] == []
    for route in gets:
        assert heads[route].headers.get("strict-transport-security") == HSTS, route
    options = each(gateway, ROUTES, lambda r: Request("OPTIONS", r.path, valid))
    assert [r for r, a in options.items() if a.status != 200] == []
    for route, answer in options.items():
        assert route.method in answer.headers["allow"], route
        assert answer.headers.get("strict-transport-security") == HSTS, route
    bodied = [r for r in ROUTES if json_body(r) is not None]
    for content_type in ("text/plain", "application/jsonx", "application/x-www-form-urlencoded",
                         "multipart/form-data; boundary=x", "application/xml"):
        def typed(route: Route, content_type: str = content_type) -> Request:
            return Request(route.method, route.path, {**valid, "Content-Type": content_type},
                           b"{}")

        wrong = each(gateway, bodied, typed)
        for route, answer in wrong.items():
            ordinary = plain[route]
            assert answer.status == 415 or (answer.status, answer.code) == (
                ordinary.status, ordinary.code), (content_type, route, answer, ordinary)
            if answer.status == 415:
                assert answer.code == "unsupported_media_type", (route, answer)


def test_a_connection_sending_garbage_is_refused(gateway: str) -> None:
    url = urlsplit(gateway)
    with socket.create_connection((url.hostname or "127.0.0.1", url.port or 80),
                                  timeout=10) as sock:
        sock.sendall(b"GET /healthz\x00 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
