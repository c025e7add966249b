"""A loopback OpenAI-compatible model that counts its calls, and the graph the re-run
tests use: input → prompt → model → model → output."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import pytest

from kionga.resource_models import ModelEndpoint
from tests.e2e.conftest import Http
from tests.e2e.helpers import wait_stored
from tests.loopback import QuietHandler, serving

CANARY = "canary-7f3e9a1c-secret"


class Upstream:
    """Counts chat completions; answers `answer N: <last user message>` and echoes the
    bearer key it was sent (a hostile server: the key must never reach a record).
    While `fail_second`, the second model's calls (asked about an answer) get a 500."""

    def __init__(self) -> None:
        self.calls = 0
        self.fail_second = False
        self.lock = threading.Lock()

    def reply(self, body: bytes, authorization: str) -> tuple[int, Any]:
        last = json.loads(body)["messages"][-1]["content"]
        if self.fail_second and last.startswith("answer "):
            return 500, {"error": "down"}
        with self.lock:
            self.calls += 1
            number = self.calls
        text = f"answer {number}: {last}"
        if "leak" in last:
            text += f" ({authorization})"
        return 200, {"choices": [{"message": {"role": "assistant", "content": text}}],
                     "usage": {"prompt_tokens": 10, "completion_tokens": 5}}


@contextmanager
def counting_model(project: Any) -> Iterator[Upstream]:
    """The project's model resource `gpt`, served by a counting Upstream on loopback."""
    counter = Upstream()

    class Handler(QuietHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            status, body = counter.reply(self.read_body(), self.headers.get("Authorization", ""))
            self.answer(status, body)

    with serving(Handler) as url:
        ModelEndpoint.objects.create(project=project, key="gpt", base_url=url + "/v1",
                                     model_name="small", secret=CANARY,
                                     price_prompt_per_1k=Decimal("1"),
                                     price_completion_per_1k=Decimal("2"))
        yield counter


def two_models(template: str = "Say {input}") -> dict[str, Any]:
    return {
        "schema_version": 2,
        "nodes": [{"id": "input", "kind": "input"},
                  {"id": "p", "kind": "prompt", "config": {"template": template}},
                  {"id": "m1", "kind": "model", "config": {"model": "gpt"}},
                  {"id": "m2", "kind": "model", "config": {"model": "gpt"}},
                  {"id": "output", "kind": "output"}],
        "edges": [{"from": "input", "to": "p"}, {"from": "p", "to": "m1"},
                  {"from": "m1", "to": "m2"}, {"from": "m2", "to": "output"}],
    }


@pytest.fixture
def model(acme: Any) -> Iterator[Upstream]:
    """The counting loopback model as project acme's resource `gpt`, for the test."""
    with counting_model(acme) as counter:
        yield counter


def run_to_end(http: Http, design_id: str, **body: Any) -> dict[str, Any]:
    """Start a run of the design and wait until it is stored as ended (its node records
    travel with its events: the last one is written before the ending)."""
    started = http.start(design_id, **body)
    assert started.status_code == 201, started.text
    return wait_stored(http, design_id, started.json()["id"])
