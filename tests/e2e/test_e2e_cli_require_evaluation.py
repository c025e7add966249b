"""`kionga designs create/update --require-evaluation/--no-require-evaluation` send
`require_evaluation` (and leave it out when neither flag is given, so an update keeps
it), as a real proxy in front of the gateway sees; `update` without --file saves the
graph as it is. When the gateway answers another value than the one asked (one older
than the client ignores the field), the answer carries a warning saying so."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Api
from tests.e2e.cli_kit import Kionga, assistant_graph, graph_file
from tests.loopback import QuietHandler, serving
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)
Sent = list[tuple[str, dict[str, Any]]]


def recording_proxy(stack: Stack, sent: Sent) -> type[BaseHTTPRequestHandler]:
    """Relays every request to the gateway; records the JSON body of each POST and PUT
    to /api/v1/agent-designs."""

    class Proxy(QuietHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self._relay(None)

        def do_POST(self) -> None:  # noqa: N802
            self._relay(self.read_body())

        def do_PUT(self) -> None:  # noqa: N802
            self._relay(self.read_body())

        def _relay(self, body: bytes | None) -> None:
            if body and self.path.startswith("/api/v1/agent-designs"):
                sent.append((self.command, json.loads(body)))
            headers = {k: v for k, v in self.headers.items()
                       if k.lower() in ("authorization", "accept", "content-type")}
            upstream = httpx.request(self.command, stack.base_url + self.path,
                                     headers=headers, content=body)
            self.answer(upstream.status_code, upstream.content,
                        upstream.headers.get("content-type", "application/json"))

    return Proxy


def test_the_flag_is_sent_only_when_given(stack: Stack, api: Api, alice: Any,
                                          tmp_path: Path) -> None:
    sent: Sent = []
    graph = graph_file(tmp_path, assistant_graph())
    direct = Kionga(stack, api.token_for(alice))
    with serving(recording_proxy(stack, sent)) as url:
        kionga = Kionga(stack, api.token_for(alice), url=url)
        created = kionga("designs", "create", "--file", graph, "--require-evaluation")
        design_id = created["data"]["design_id"]
        kionga("designs", "update", design_id, "--revision", "1", "--file", graph)
        saved = direct("validate", design_id)["data"]["content_sha256"]
        off = kionga("designs", "update", design_id, "--revision", "2",
                     "--no-require-evaluation")
        plain = kionga("designs", "create", "--file", graph)
    assert [(method, body.get("require_evaluation", "absent")) for method, body in sent] == [
        ("POST", True), ("PUT", "absent"), ("PUT", False), ("POST", "absent")]
    assert off["data"]["revision"] == 3  # no --file: the saved graph, as it was
    assert direct("validate", design_id)["data"]["content_sha256"] == saved
    assert plain["warnings"] == []
    for answer, asked in ((created, True), (off, False)):
        took = answer["data"]["require_evaluation"] == asked
        warned = [w["code"] for w in answer["warnings"]] == ["require_evaluation_ignored"]
        assert took != warned, answer  # the gateway took it, or the client says it did not


def test_update_needs_something_to_save(stack: Stack, api: Api, alice: Any) -> None:
    kionga = Kionga(stack, api.token_for(alice))
    design_id = kionga("designs", "create", "--template", "assistant")["data"]["design_id"]
    refused = kionga("designs", "update", design_id, "--revision", "1", code=2)["error"]
    assert refused["code"] == "USAGE" and "--require-evaluation" in refused["message"]
