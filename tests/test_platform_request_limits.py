"""Over real HTTP, the Procfile's gateway line (uvicorn): a chunked body is read, not
taken for empty; bodies past the limit are 413 payload_too_large; too many header
fields are 431; a head still incomplete past its bound is refused by the HTTP parser
(kionga.http_protocol) before the client can make it buffer more."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from django.conf import settings

from contracts.registry import CEILINGS
from kionga.http_limits import MAX_HEADER_BYTES, MAX_HEADER_FIELDS
from kionga.http_protocol import MAX_HEAD_BYTES
from kionga.tokens import issue_token
from tests.designs_helpers import assistant_graph
from tests.internal_listener import database_url_of_tests
from tests.stack import free_port

pytestmark = pytest.mark.django_db(transaction=True)  # the listener has its own connection

ROOT = Path(settings.BASE_DIR)
VALIDATE = "/api/v1/agent-designs/validate"


def procfile_line(process: str) -> str:
    for line in (ROOT / "Procfile").read_text().splitlines():
        name, _, command = line.partition(":")
        if name == process:
            return command.strip()
    raise AssertionError(f"no {process} line in the Procfile")


@pytest.fixture(scope="module")
def gateway(django_db_setup: Any, django_db_blocker: Any) -> Iterator[str]:
    """The Procfile's gateway command, as is, on a free port."""
    with procfile_gateway() as base:
        yield base


@contextmanager
def procfile_gateway(**env: str) -> Iterator[str]:
    """The Procfile's gateway command, as is, on a free port, on the test database, with
    these environment variables more; yields its base URL once /healthz answers."""
    port = free_port()
    environment = {**os.environ, "DATABASE_URL": database_url_of_tests(),
                   "PORT_GATEWAY": str(port), "KIONGA_BIND_HOST": "127.0.0.1",
                   "DJANGO_SETTINGS_MODULE": "kionga.settings", **env}
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(["bash", "-c", "exec " + procfile_line("gateway")],
                                   cwd=ROOT, env=environment, stdout=log,
                                   stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 30
            while not _up(base):
                if process.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise RuntimeError(log.read().decode(errors="replace")[-2000:])
                time.sleep(0.1)
            yield base
        finally:
            process.terminate()
            process.wait(timeout=10)


def _up(base: str) -> bool:
    try:
        return httpx.get(base + "/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def headers_for(user: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {issue_token(user, name='limits')}",
            "Content-Type": "application/json"}


def chunks(data: bytes, size: int = 1000) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start:start + size]


def test_it_reads_a_chunked_body(gateway: str, alice: Any) -> None:
    body = json.dumps(assistant_graph()).encode()
    response = httpx.post(gateway + VALIDATE, content=chunks(body), headers=headers_for(alice))
    assert response.request.headers.get("transfer-encoding") == "chunked"
    assert "content-length" not in response.request.headers
    assert response.status_code == 200, response.text
    assert response.json()["runnable"] is True


def test_it_refuses_bodies_past_the_limit(gateway: str, alice: Any) -> None:
    limit = CEILINGS["max_body_bytes"]
    big = b'{"nodes": [], "edges": [], "name": "' + b"x" * limit + b'"}'
    for content in (big, chunks(big, 64 * 1024)):
        response = httpx.post(gateway + VALIDATE, content=content, headers=headers_for(alice))
        assert response.status_code == 413, response.text
        assert response.json()["error"]["code"] == "payload_too_large"
    # At the limit itself the body is read (and answered as any document).
    fits = b'{"nodes": [], "edges": [], "name": "' + b"x" * (limit - 100) + b'"}'
    response = httpx.post(gateway + VALIDATE, content=fits, headers=headers_for(alice))
    assert response.status_code == 200, response.text


def test_it_limits_header_fields(gateway: str) -> None:
    many = {f"x-extra-{i}": "1" for i in range(MAX_HEADER_FIELDS + 1)}
    response = httpx.get(gateway + "/healthz", headers=many)
    assert response.status_code == 431
    assert response.json()["error"]["code"] == "request_header_fields_too_large"
    big = httpx.get(gateway + "/healthz", headers={"x-big": "a" * (MAX_HEADER_BYTES + 1)})
    assert big.status_code == 431
    # Far past what fits one read, the HTTP parser itself gives up (kionga.http_protocol).
    try:
        status = httpx.get(gateway + "/healthz", headers={"x-big": "a" * 200_000}).status_code
    except httpx.HTTPError:
        status = 0  # it may close the connection before the client reads the answer
    assert status in (0, 431)
    assert httpx.get(gateway + "/healthz").status_code == 200


def test_a_head_that_never_ends_is_refused_by_the_parser(gateway: str) -> None:
    """One header line with no end, sent piece by piece: the parser answers 431 and
    closes once the head passes its bound (plain httptools would buffer it all)."""
    url = urlsplit(gateway)
    with socket.create_connection((url.hostname or "127.0.0.1", url.port or 80),
                                  timeout=10) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ")
        sent = 0
        # Each piece waits for an answer first: a piece sent to a closed connection
        # would reset it and could lose the answer.
        while sent < 20 * MAX_HEAD_BYTES and not select.select([sock], [], [], 0.2)[0]:
            sock.sendall(b"a" * 4096)
            sent += 4096
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert sent < 4 * MAX_HEAD_BYTES, sent  # refused near the bound, not at the end
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert json.loads(body)["error"]["code"] == "request_header_fields_too_large"


def test_a_large_body_is_not_taken_for_a_large_head(gateway: str, alice: Any) -> None:
    """The head bound counts only the head: a body read with it (or pipelined after
    another request) is the body's business (413 past its own limit)."""
    body = json.dumps({**assistant_graph(), "name": "x" * 200_000}).encode()
    response = httpx.post(gateway + VALIDATE, content=body, headers=headers_for(alice))
    assert response.status_code == 200, response.text
