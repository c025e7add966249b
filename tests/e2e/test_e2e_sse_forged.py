"""A live stream entry without the MAC of its run's event key never reaches an SSE
client: anything that can write to the run's Redis stream (the runner's user can write
to any run's) cannot show its readers an event, nor end the run for them."""

from typing import Any

import pytest
import redis

from approvals.actions import do_decide
from approvals.models import ApprovalRequest
from runner import protocol
from tests.conftest import Api
from tests.e2e.conftest import Http
from tests.e2e.helpers import approval_graph, wait_for
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def forged_entries(run_id: str, seq: int) -> list[dict[Any, Any]]:
    def encoded(event: dict[str, Any]) -> bytes:
        return protocol.encode_event(event).encode("utf-8")

    ending = encoded({"seq": seq, "type": "run.completed", "at": protocol.now_iso(),
                      "output": "forged", "usage": {"tokens": 0}})
    delta = encoded({"seq": seq, "type": "node.delta", "at": protocol.now_iso(),
                     "node_id": "model", "attempt": 1, "delta": "forged", "delta_index": 0})
    return [
        {"e": delta},  # no MAC
        {"e": ending},  # no MAC
        {"e": ending, "mac": "0" * 64},  # a made-up MAC
        {"e": ending, "mac": protocol.event_mac(b"k" * 32, run_id, ending)},  # another key
    ]


def test_a_client_sees_only_the_runs_own_entries(stack: Stack, api: Api, alice: Any,
                                                 carol: Any, acme: Any) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, approval_graph())
    run_id = http.start(design_id, input="one two").json()["id"]
    forger = redis.Redis.from_url(stack.redis_url)

    def forge_then_approve(kind: str, data: dict[str, Any]) -> None:
        if kind == "approval.requested":
            for fields in forged_entries(run_id, data["seq"] + 1):
                forger.xadd(protocol.run_stream(run_id), fields)
            approval = ApprovalRequest.objects.get(pk=data["approval_id"])
            do_decide(carol, approval, "approve", "fine")

    frames = http.sse(design_id, run_id, on_event=forge_then_approve)
    forger.close()
    assert all("forged" not in str(data) for _kind, data in frames), frames
    kinds = [k for k, _ in frames]
    assert kinds[-1] == "run.completed" and frames[-1][1]["output"] == "mock: one two"
    stored = [d for k, d in frames if k != "delta"]
    assert [e["seq"] for e in stored] == list(range(len(stored)))
    run = wait_for(lambda: (r := http.run(design_id, run_id))["status"] == "completed" and r)
    assert run["events"] == stored
    log = (stack.log_dir / "gateway.log").read_text(errors="replace")
    assert f"run {run_id}: dropped live entry" in log
