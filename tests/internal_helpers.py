"""Helpers for the internal listener's tests: runs with credentials, a client that
presents one, and a tiny upstream HTTP server on loopback (stdlib only)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from django.contrib.auth.models import User
from rest_framework.test import APIClient

from kionga.builtin_tools import BUILTIN_TOOLS
from kionga.models import Project
from kionga.redis_client import sync_redis
from kionga.resource_models import ApiConnection, Dataset, Function, KnowledgeBase, ModelEndpoint
from runner import protocol
from runs.credentials import issue_credential
from runs.models import Run
from tests.conftest import CheckedClient
from tests.loopback import QuietHandler, serving

INTERNAL_URLS = "kionga.internal_urls"
BASE = "/api/v1/"

# route(method, path, headers, body) -> (status, content type, body bytes)
Route = Callable[[str, str, dict[str, str], bytes], tuple[int, str, bytes]]


# Long enough for any test; a real run's lease is renewed every 2 s.
TEST_LEASE_SECONDS = 3600.0


def start_run(user: User, project: Project, status: str = "running", *,
              allow_side_effects: bool = True,
              resources: dict[str, list[str]] | None = None) -> tuple[Run, str]:
    """A run of project started by user, and its raw credential. It holds a capacity
    slot as a run in flight does; its graph names `resources` (default: every resource
    the project has now, and the built-in tools)."""
    run = Run.objects.create(project=project, created_by=user, content_sha256="0" * 64,
                             status=status, allow_side_effects=allow_side_effects,
                             resources=project_resources(project) if resources is None
                             else resources)
    protocol.acquire_slot(sync_redis(), str(run.pk), 1_000_000, TEST_LEASE_SECONDS)
    return run, issue_credential(run)


def project_resources(project: Project) -> dict[str, list[str]]:
    def keys(model: Any) -> list[str]:
        return sorted(model.objects.filter(project=project).values_list("key", flat=True))

    return {"model": keys(ModelEndpoint), "function": sorted({*keys(Function), *BUILTIN_TOOLS}),
            "connection": keys(ApiConnection), "knowledge_base": keys(KnowledgeBase),
            "dataset": keys(Dataset)}


def run_client(credential: str) -> APIClient:
    client = CheckedClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {credential}")
    return client


def json_answer(status: int, body: Any) -> tuple[int, str, bytes]:
    return status, "application/json", json.dumps(body).encode()


def chat_answer(text: str, prompt: int = 7, completion: int = 3) -> tuple[int, str, bytes]:
    """An OpenAI-compatible non-streaming chat completion."""
    return json_answer(200, {
        "id": "chatcmpl-1", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion},
    })


@contextmanager
def upstream(route: Route) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Serve route on 127.0.0.1; yields (base URL, recorded requests)."""
    seen: list[dict[str, Any]] = []

    class Handler(QuietHandler):
        def _handle(self) -> None:
            raw = self.read_body()
            headers = {k.lower(): v for k, v in self.headers.items()}
            seen.append({"method": self.command, "path": self.path, "headers": headers,
                         "body": raw})
            status, content_type, body = route(self.command, self.path, headers, raw)
            self.answer(status, body, content_type)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _handle

    with serving(Handler) as url:
        yield url, seen


def closed_port_url() -> str:
    """A loopback URL nobody listens on (connection refused)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = server.server_address[1]
    server.server_close()
    return f"http://127.0.0.1:{port}"
