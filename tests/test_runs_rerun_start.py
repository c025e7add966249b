"""POST …/runs with from_run and from_node: the task repeats the recorded outputs of the
nodes before from_node (and the run's input); what cannot feed the graph is refused with
a clear answer; version runs re-run the same way; the hot path leaves such bodies to
Django."""

from typing import Any

import pytest
import redis

from runner import protocol
from runs.models import NodeRecord, Run
from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.runs_helpers import queued_tasks, start_url
from tests.versions_helpers import publish

pytestmark = pytest.mark.django_db(transaction=True)

# The assistant template: input → prompt → model → output.
NODES = ("input", "prompt", "model", "output")


def recorded_run(api: Api, user: Any, design: Any, rds: redis.Redis,
                 **output: Any) -> Run:
    """A run of the design, ended, with a record of every node (as its runner would)."""
    answer = api.client_for(user).post(start_url(design), {"input": "hello"}, format="json")
    assert answer.status_code == 201, answer.content
    run = Run.objects.get(pk=answer.json()["id"])
    # Its task and slot: no runner here.
    rds.delete(protocol.QUEUE)
    protocol.release_slot(rds, str(run.pk))
    Run.objects.filter(pk=run.pk).update(status="completed")
    for node in NODES:
        value = {"port": "out", "type": "text", "value": f"{node} said", "truncated": False,
                 "redacted": False, **(output if node == "prompt" else {})}
        NodeRecord.objects.create(run=run, node_id=node, attempt=1, status="completed",
                                  data={"node_id": node, "attempt": 1, "status": "completed",
                                        "output": value})
    return Run.objects.get(pk=run.pk)


def test_the_task_repeats_the_nodes_before_from_node(api: Api, alice: Any, acme: Any,
                                                     runner_configured: Any,
                                                     rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    source = recorded_run(api, alice, design, rds)
    answer = api.client_for(alice).post(start_url(design), {
        "from_run": str(source.pk), "from_node": "model"}, format="json")
    assert answer.status_code == 201, answer.content
    data = answer.json()
    assert (data["from_run"], data["from_node"], data["input"]) == (str(source.pk), "model",
                                                                    "hello")
    [(payload, _)] = queued_tasks(rds)
    assert payload["input"] == "hello"
    assert payload["reuse"] == {node: {"port": "out", "value": f"{node} said",
                                       "from_run": str(source.pk)}
                                for node in ("input", "prompt")}


def test_a_plain_start_sends_no_reuse(api: Api, alice: Any, acme: Any,
                                      runner_configured: Any, rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    assert api.client_for(alice).post(start_url(design), {"input": "x"},
                                      format="json").status_code == 201
    [(payload, _)] = queued_tasks(rds)
    assert "reuse" not in payload


def test_it_refuses_what_cannot_feed_the_graph(api: Api, alice: Any, acme: Any,
                                               mallory: Any, evil: Any,
                                               runner_configured: Any,
                                               rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    source = recorded_run(api, alice, design, rds)
    other = make_design(alice, acme, "Other")
    client = api.client_for(alice)

    def refused(status: int, code: str, body: dict[str, Any], where: Any = design) -> Any:
        answer = client.post(start_url(where), body, format="json")
        api.assert_error(answer, status, code)
        return answer.json()["error"]["details"]

    run_id = str(source.pk)
    assert "from_node" in refused(400, "invalid_request", {"from_run": run_id})["fields"]
    assert "from_run" in refused(400, "invalid_request", {"from_node": "model"})["fields"]
    assert "from_run" in refused(400, "invalid_request",
                                 {"from_run": run_id, "from_node": "model"}, other)["fields"]
    assert "from_node" in refused(400, "invalid_request",
                                  {"from_run": run_id, "from_node": "nope"})["fields"]
    assert "input" in refused(400, "invalid_request", {
        "from_run": run_id, "from_node": "model", "input": "another"})["fields"]
    Run.objects.filter(pk=source.pk).update(status="running")
    assert "from_run" in refused(400, "invalid_request",
                                 {"from_run": run_id, "from_node": "model"})["fields"]
    cut = recorded_run(api, alice, design, rds, truncated=True)
    issues = refused(422, "validation_failed",
                     {"from_run": str(cut.pk), "from_node": "model"})["issues"]
    assert [(i["code"], i["node_id"]) for i in issues] == [("rerun_record_not_exact", "prompt")]
    assert "cut at the record limit" in issues[0]["message"]
    hidden = recorded_run(api, alice, design, rds, redacted=True)
    issues = refused(422, "validation_failed",
                     {"from_run": str(hidden.pk), "from_node": "model"})["issues"]
    assert "held a secret" in issues[0]["message"]
    # From the node whose record is not exact, nothing of it is repeated: fine.
    assert client.post(start_url(design), {"from_run": str(cut.pk), "from_node": "prompt"},
                       format="json").status_code == 201
    assert Run.objects.filter(from_run__isnull=False).count() == 1


def test_a_version_run_reruns_from_a_design_run(api: Api, alice: Any, acme: Any,
                                                runner_configured: Any,
                                                rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    version = publish(alice, design)
    source = recorded_run(api, alice, design, rds)
    answer = api.client_for(alice).post(f"/api/v1/agent-versions/{version.pk}/runs", {
        "from_run": str(source.pk), "from_node": "output"}, format="json")
    assert answer.status_code == 201, answer.content
    assert answer.json()["version_id"] == str(version.pk)
    [(payload, _)] = queued_tasks(rds)
    assert set(payload["reuse"]) == {"input", "prompt", "model"}


