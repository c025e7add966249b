"""A deployed agent's runtime bounds what a caller's request head can make it buffer
(agents.http.BoundedHttpProtocol on httptools): one header line with no end is answered
431 in the platform's error shape near the bound, and the runtime serves on."""

from __future__ import annotations

import json
import os
import re
import select
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agents.http import MAX_HEAD_BYTES
from contracts.hashing import content_sha256
from contracts.normalize import normalize
from tests.agent_local_helpers import until
from tests.stack import ROOT


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[str]:
    graph = normalize({"schema_version": 2, "nodes": [
        {"id": "input", "kind": "input"}, {"id": "output", "kind": "output"}],
        "edges": [{"from": "input", "to": "output"}]}).graph
    path = tmp_path / "artifact.json"
    path.write_text(json.dumps({"version": 1, "version_id": "v1", "graph": graph,
                                "content_sha256": content_sha256(graph), "subflows": []}))
    env = {**os.environ, "KIONGA_AGENT_ARTIFACT": str(path), "KIONGA_AGENT_PORT": "0",
           "KIONGA_AGENT_CREDENTIAL": "kag_x"}
    process = subprocess.Popen([sys.executable, "-m", "agents.serve"], cwd=ROOT, env=env,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        for line in process.stderr:
            found = re.search(r"serving version .* on (http://\S+)", line)
            if found:  # logged as the port is bound, before it listens
                url = found.group(1)
                until(lambda: _up(url))  # noqa: B023 (called at once, in this iteration)
                yield url
                break
        else:
            raise AssertionError("the runtime did not start")
    finally:
        process.terminate()
        process.wait(timeout=30)


def _up(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz").status_code == 200
    except httpx.HTTPError:
        return False


def test_a_head_that_never_ends_is_refused_near_the_bound(runtime: str) -> None:
    port = int(runtime.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
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
    assert sent < 4 * MAX_HEAD_BYTES, sent
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert json.loads(body)["error"]["code"] == "request_header_fields_too_large"
    assert httpx.get(f"{runtime}/healthz").json()["status"] == "ok"
