"""`kionga --json` against the live stack: every command answers one kionga/1 envelope
that follows its JSON Schema, and each exit code comes from a real situation."""

from __future__ import annotations

import uuid
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from runner import protocol
from runs.models import Run
from runs.quota import project_runs_key
from tests.conftest import Api
from tests.e2e.cli_kit import Kionga, assistant_graph, graph_file
from tests.e2e.conftest import Http
from tests.e2e.helpers import approval_graph, wait_for
from tests.loopback import serving
from tests.stack import Stack, free_port

pytestmark = pytest.mark.django_db(transaction=True)


def test_every_command_answers_its_envelope(stack: Stack, api: Api, alice: Any,
                                            tmp_path: Path) -> None:
    kionga = Kionga(stack, api.token_for(alice))
    caps = kionga("capabilities")["data"]
    assert caps["envelope"] == "kionga/1" and caps["features"]["runs"]
    assert {"tool", "api"} == {c["kind"] for c in caps["components"] if c["side_effects"]}
    assert "retry" in kionga("agent-guide")["data"]["guide"].lower()
    assert len(kionga("templates", "list")["data"]["templates"]) == 5
    created = kionga("designs", "create", "--template", "assistant")["data"]
    design_id = created["design_id"]
    assert [d["id"] for d in kionga("designs", "list")["data"]["designs"]] == [design_id]
    updated = kionga("designs", "update", design_id, "--revision", "1", "--file",
                     graph_file(tmp_path, assistant_graph()))["data"]
    assert updated["revision"] == 2
    assert kionga("validate", design_id)["data"]["runnable"] is True
    assert kionga("validate", graph_file(tmp_path, assistant_graph()))["data"]["runnable"]
    plan = kionga("run", design_id, "--input", "hi", "--dry-run")["data"]
    assert [s["node_id"] for s in plan["steps"]] == ["input", "model", "output"]
    assert plan["side_effects"] == []
    run = kionga("run", design_id, "--input", "hello")["data"]
    assert (run["status"], run["output"]) == ("completed", "mock: hello")
    detached = kionga("run", design_id, "--input", "later", "--detach")["data"]
    assert detached["status"] in ("queued", "running", "completed")
    followed = kionga("runs", "events", detached["run_id"], "--follow")["data"]
    assert followed["events"][-1]["type"] == "run.completed"
    assert [e["seq"] for e in followed["events"]] == list(range(len(followed["events"])))
    shown = kionga("runs", "show", run["run_id"])["data"]
    assert shown["design_id"] == design_id and shown["events"][-1]["type"] == "run.completed"
    events = kionga("runs", "events", run["run_id"], "--design", design_id)["data"]
    assert events["events"] == shown["events"]
    show = kionga("designs", "show", design_id)["data"]
    assert show["last_run"]["run_id"] == detached["run_id"] and show["side_effects"] == []
    published = kionga("publish", design_id, "--notes", "first")["data"]
    assert (published["number"], published["created"]) == (1, True)
    again = kionga("publish", design_id)["data"]
    assert (again["version_id"], again["created"]) == (published["version_id"], False)
    versions = kionga("versions", "list", design_id)["data"]["versions"]
    assert [v["number"] for v in versions] == [1]
    version_run = kionga("run", design_id, "--version", "1", "--input", "v1")["data"]
    assert version_run["version_id"] == published["version_id"]
    assert kionga("approvals", "list")["data"]["approvals"] == []
    assert caps["features"]["evaluations"]
    fixtures = Http(stack, api.token_for(alice)).client.put(
        f"/api/v1/agent-designs/{design_id}/fixtures", json={"revision": 0, "cases": [
            {"name": "reaches the answer", "input": "hi",
             "expected": {"calls": ["model", "output"]}}]})
    assert fixtures.status_code == 200, fixtures.text
    evaluation = kionga("evaluate", design_id)["data"]
    assert (evaluation["status"], evaluation["passed"]) == ("completed", True)
    assert evaluation["counts"]["passed"] == evaluation["progress"]["total"] == 1
    assert kionga("evaluate", design_id, "--detach")["data"]["status"] in ("queued", "running")
    # A judged case cannot pass without a working judge: exit 1, every case's result kept.
    judged = Http(stack, api.token_for(alice)).client.put(
        f"/api/v1/agent-designs/{design_id}/fixtures", json={"revision": 1, "cases": [
            {"name": "judged", "input": "hi",
             "expected": {"judge": {"criteria": ["relevance"]}}}]})
    assert judged.status_code == 200, judged.text
    failed = kionga("evaluate", design_id, code=1)
    assert failed["error"]["code"] == "EVALUATION_FAILED"
    assert failed["data"]["cases"][0]["passed"] is False
    usage = kionga("run", code=2)
    assert usage["error"]["code"] == "USAGE"
    # The cancel command is checked in the exit-code test; the rest were all called here.
    assert kionga.commands >= {"capabilities", "agent-guide", "templates list",
                               "designs create", "designs list", "designs update",
                               "designs show", "validate", "run", "runs events",
                               "runs show", "publish", "versions list", "approvals list",
                               "evaluate"}


def test_each_failure_has_its_exit_code(stack: Stack, api: Api, alice: Any, carol: Any,
                                        tmp_path: Path) -> None:
    token = api.token_for(alice)
    kionga = Kionga(stack, token)
    invalid = {"schema_version": 2, "nodes": [{"id": "input", "kind": "input"}], "edges": []}
    error = kionga("validate", graph_file(tmp_path, invalid), code=4)
    assert error["error"]["code"] == "GRAPH_INVALID" and error["data"]["issues"]
    newer = {**assistant_graph(), "schema_version": 3}
    error = kionga("validate", graph_file(tmp_path, newer), code=5)
    assert error["error"]["code"] == "SCHEMA_TOO_NEW"
    down = Kionga(stack, token, url=f"http://127.0.0.1:{free_port()}")
    error = down("designs", "list", code=6)["error"]
    assert (error["code"], error["retryable"]) == ("GATEWAY_UNREACHABLE", True)
    error = Kionga(stack, "kio_not-a-token")("designs", "list", code=6)["error"]
    assert (error["code"], error["retryable"]) == ("AUTH_REFUSED", False)
    assert kionga("designs", "show", str(uuid.uuid4()), code=7)["error"]["code"] == (
        "DESIGN_NOT_FOUND")
    assert kionga("runs", "show", str(uuid.uuid4()), code=7)["error"]["code"] == (
        "RUN_NOT_FOUND")
    design_id = kionga("designs", "create", "--file",
                       graph_file(tmp_path, approval_graph()))["data"]["design_id"]
    kionga("designs", "update", design_id, "--revision", "1", "--file",
           graph_file(tmp_path, approval_graph()))
    error = kionga("designs", "update", design_id, "--revision", "1", "--file",
                   graph_file(tmp_path, approval_graph()), code=8)["error"]
    assert (error["code"], error["retryable"]) == ("STALE_REVISION", False)
    # Runs waiting on a person hold no slot (they are parked); the project's share (half
    # the runner) is then held by runs in flight, stood in for by slots taken as the
    # gateway takes them, in the stack's Redis.
    share = stack.max_runs // 2
    waiting = [kionga("run", design_id, "--input", f"w{i}", "--detach")["data"]["run_id"]
               for i in range(2)]
    project_id = Run.objects.get(pk=waiting[0]).project_id
    # Parked once they wait on their approval: until then they hold slots of the share.
    wait_for(lambda: all(Run.objects.get(pk=run_id).status == "waiting" for run_id in waiting))
    held = [f"in-flight-{i}" for i in range(share)]
    with redis.Redis.from_url(stack.redis_url) as client:
        for run_id in held:
            assert protocol.acquire_slot(client, run_id, stack.max_runs, 60, protocol.Share(
                project_runs_key(project_id), share, 3600)) == protocol.SLOT_TAKEN
        full = kionga("run", design_id, "--input", "one more", "--detach", code=8)
        for run_id in held:
            protocol.release_slot(client, run_id)
    assert (full["error"]["code"], full["error"]["retryable"]) == ("AT_CAPACITY", True)
    # A person rejects the first run's approval: it ends without output → 3.
    approver = Http(stack, api.token_for(carol))
    pending = wait_for(lambda: approver.client.get(
        "/api/v1/agent-approvals", params={"run_id": waiting[0], "status": "pending"}
    ).json()["approvals"])
    approver.client.post(f"/api/v1/agent-approvals/{pending[0]['id']}/decision",
                         json={"decision": "reject", "comment": "no"})
    rejected = kionga("runs", "events", waiting[0], "--follow", code=3)
    assert rejected["error"]["code"] == "APPROVAL_REJECTED"
    assert rejected["data"]["run_id"] == waiting[0]
    assert rejected["error"]["where"] == {"node_id": "gate"}
    # Cancelled → 3, and a run that has ended cannot be cancelled again → 8.
    assert kionga("runs", "cancel", waiting[1])["data"]["run_id"] == waiting[1]
    wait_for(lambda: Run.objects.get(pk=waiting[1]).status == "cancelled")
    assert kionga("runs", "show", waiting[1], code=3)["error"]["code"] == "RUN_CANCELLED"
    error = kionga("runs", "cancel", waiting[1], "--design", design_id, code=8)["error"]
    assert error["code"] == "RUN_NOT_ACTIVE"



def cutting_proxy(stack: Stack, streams: list[tuple[str, str | None]]
                  ) -> type[BaseHTTPRequestHandler]:
    """A real proxy to the gateway that cuts the first event stream it serves (a start's
    or an events route's) right after its third event, and records each stream's method
    and Last-Event-ID in `streams`."""

    class Proxy(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self._relay(None)

        def do_POST(self) -> None:  # noqa: N802
            self._relay(self.rfile.read(int(self.headers.get("Content-Length", 0))))

        def _relay(self, body: bytes | None) -> None:
            headers = {k: v for k, v in self.headers.items()
                       if k.lower() in ("authorization", "accept", "last-event-id",
                                        "content-type", "idempotency-key")}
            sse = "text/event-stream" in headers.get("Accept", "")
            if sse:
                streams.append((self.command, self.headers.get("Last-Event-ID")))
            with httpx.stream(self.command, stack.base_url + self.path, headers=headers,
                              content=body) as upstream:
                self.send_response(upstream.status_code)
                self.send_header("Content-Type", upstream.headers["content-type"])
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                seen = b""  # the first stream, cut right after its third event
                for chunk in upstream.iter_bytes():
                    cut = _after_events(seen + chunk, 3) if sse and len(streams) == 1 \
                        else None
                    part = chunk if cut is None else (seen + chunk)[len(seen):cut]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                    seen += chunk
                    if cut is not None:
                        self.wfile.flush()
                        self.close_connection = True
                        return  # cut mid-stream: no last chunk
                self.wfile.write(b"0\r\n\r\n")

        def log_message(self, *args: Any) -> None:
            pass

    return Proxy


def test_a_followed_stream_resumes_after_a_dropped_line(stack: Stack, api: Api,
                                                        alice: Any) -> None:
    """A real proxy between the CLI and the gateway cuts the first event stream after
    three events; `runs events --follow` reconnects with Last-Event-ID and misses none."""
    token = api.token_for(alice)
    kionga = Kionga(stack, token)
    design_id = kionga("designs", "create", "--template", "assistant")["data"]["design_id"]
    run_id = kionga("run", design_id, "--input", "hi")["data"]["run_id"]
    streams: list[tuple[str, str | None]] = []
    with serving(cutting_proxy(stack, streams)) as url:
        followed = Kionga(stack, token, url=url)("runs", "events", run_id, "--design",
                                                 design_id, "--follow")["data"]
    assert len(streams) == 2 and streams[0] == ("GET", None)
    assert streams[1][1] is not None and int(streams[1][1]) >= 2
    assert [e["seq"] for e in followed["events"]] == list(range(10))


def test_a_run_started_in_one_request_resumes_after_a_dropped_line(
        stack: Stack, api: Api, alice: Any) -> None:
    """`kionga run` starts and follows in one request; cut after three events, it says
    so, resumes on the events route from the last event and ends with the run."""
    token = api.token_for(alice)
    design_id = Kionga(stack, token)("designs", "create", "--template",
                                     "assistant")["data"]["design_id"]
    streams: list[tuple[str, str | None]] = []
    with serving(cutting_proxy(stack, streams)) as url:
        kionga = Kionga(stack, token, url=url)
        ran = kionga("run", design_id, "--input", "hi")["data"]
    assert streams[0] == ("POST", None) and streams[1][0] == "GET"
    resumed_after = streams[1][1]
    assert resumed_after is not None and int(resumed_after) >= 2
    assert f"stream dropped; resuming after event {resumed_after}" in kionga.stderr
    assert ran["status"] == "completed"
    assert Run.objects.get(pk=ran["run_id"]).events.count() == 10


def test_side_effects_need_both_flags(stack: Stack, api: Api, alice: Any,
                                      tmp_path: Path) -> None:
    kionga = Kionga(stack, api.token_for(alice))
    counter = {"schema_version": 2, "nodes": [
        {"id": "input", "kind": "input"},
        {"id": "count", "kind": "tool", "config": {"tool": "word_count"}},
        {"id": "output", "kind": "output"}],
        "edges": [{"from": "input", "to": "count"}, {"from": "count", "to": "output"}]}
    design_id = kionga("designs", "create", "--file",
                       graph_file(tmp_path, counter))["data"]["design_id"]
    plan = kionga("run", design_id, "--dry-run")
    assert [e["node_id"] for e in plan["data"]["side_effects"]] == ["count"]
    assert [w["code"] for w in plan["warnings"]] == ["side_effects"]
    text = ["--input", "three little words"]
    for flags in ([], ["--yes"], ["--allow-side-effects"]):  # no terminal: never asks
        refused = kionga("run", design_id, *text, *flags, code=2)
        assert refused["error"]["code"] == "CONFIRMATION_REQUIRED", flags
    assert not Run.objects.exists()
    done = kionga("run", design_id, *text, "--allow-side-effects", "--yes")
    assert done["data"]["status"] == "completed" and "3" in done["data"]["output"]
    assert done["warnings"] == plan["warnings"]


def _after_events(stream: bytes, count: int) -> int | None:
    """Where the `count`th frame with an id ends in an SSE byte stream, if it does."""
    end = 0
    for frame in stream.split(b"\n\n")[:-1]:
        end += len(frame) + 2
        count -= frame.startswith(b"id: ")
        if count == 0:
            return end
    return None
