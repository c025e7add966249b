"""A deployed agent's turn its runtime never reports ends with `turn_lost` once past its
deadline (its graph's timeout_seconds and a grace): by the beat worker's sweep, once,
audited, its approvals cancelled; a late report is refused and changes nothing; the
operations metrics count the turn as an error."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.test import override_settings
from django.utils import timezone

from approvals.models import ApprovalRequest
from deployments.credentials import issue_credential
from deployments.models import Agent
from designs.models import Version
from kionga.celery import app
from kionga.models import AuditEvent, Project
from runner.task_limits import person_waits
from runs.agent_turns import TurnReport, do_open_turn, do_report_turn
from runs.lost_turns import GRACE, MESSAGE, TURN_LOST, do_end_lost_turns
from runs.models import Run
from runs.tasks import end_lost_turns_task
from tests.approvals_helpers import pending
from tests.conftest import Api
from tests.internal_helpers import BASE, INTERNAL_URLS, run_client
from tests.operations_helpers import agent_of, rollup_rows
from tests.versions_helpers import linear, published

REPORT = {"status": "completed", "latency_ms": 40, "tokens": 3, "output": "late",
          "error": None}


def _agent(user: User, project: Project, timeout_seconds: int) -> tuple[Agent, Version]:
    version = published(user, project, linear(
        {"id": "fill", "kind": "prompt", "config": {"template": "{input}"}},
        settings={"timeout_seconds": timeout_seconds}))
    return agent_of(version, f"agent-{timeout_seconds}"), version


def _opened(agent: Agent, version: Version, seconds_ago: float) -> Run:
    """A turn opened `seconds_ago` and never reported (its runtime is gone)."""
    turn = do_open_turn(agent, str(version.pk), "hi", "s1")
    Run.objects.filter(pk=turn.pk).update(
        started_at=timezone.now() - timedelta(seconds=seconds_ago))
    return turn


def _late(timeout_seconds: int) -> float:
    """Seconds since opening that put a turn of this timeout just past its deadline."""
    return timeout_seconds + GRACE.total_seconds() + 2


def test_the_sweep_ends_turns_past_their_deadline_once(carol: User, acme: Project) -> None:
    agent, version = _agent(carol, acme, timeout_seconds=60)
    short, short_version = _agent(carol, acme, timeout_seconds=10)
    lost = _opened(agent, version, _late(60))
    in_time = _opened(agent, version, _late(60) - 10)  # its graph's 60 s count
    lost_short = _opened(short, short_version, _late(10))
    gate = pending(lost, seconds=60)

    assert end_lost_turns_task() == 2  # the beat task drives the sweep
    for turn in (lost, lost_short):
        turn.refresh_from_db()
        assert (turn.status, turn.error, turn.output) == (
            "failed", {"code": TURN_LOST, "message": MESSAGE}, None)
        assert turn.finished_at is not None and turn.latency_ms is None
    assert Run.objects.get(pk=in_time.pk).status == "running"
    assert ApprovalRequest.objects.get(pk=gate.pk).status == "cancelled"
    audited = AuditEvent.objects.get(action="run.finished", target_id=str(lost.pk))
    assert (audited.project, audited.actor, audited.details) == (
        acme, None, {"status": "failed", "error": lost.error})

    counted = rollup_rows()
    assert do_end_lost_turns() == 0  # idempotent: nothing ends or counts twice
    assert rollup_rows() == counted
    assert AuditEvent.objects.filter(action="run.finished").count() == 2
    # Its own deadline comes: the other turn ends too.
    assert do_end_lost_turns(timezone.now() + timedelta(seconds=11)) == 1


def test_the_beat_worker_runs_the_sweep_every_few_seconds() -> None:
    entry: dict[str, Any] = next(e for e in settings.CELERY_BEAT_SCHEDULE.values()
                                 if e["task"] == "runs.end_lost_turns")
    assert float(entry["schedule"]) <= 5.0
    app.loader.import_default_modules()
    assert app.tasks["runs.end_lost_turns"].run is end_lost_turns_task.run


def test_a_late_report_is_refused_and_changes_nothing(carol: User, acme: Project) -> None:
    agent, version = _agent(carol, acme, timeout_seconds=30)
    lost = _opened(agent, version, _late(30))
    reported = _opened(agent, version, 1)
    do_report_turn(agent, reported.pk, TurnReport("completed", 5, 1, "ok"))
    assert do_end_lost_turns() == 1
    before, counted = Run.objects.get(pk=lost.pk), rollup_rows()

    client = run_client(issue_credential(agent))
    with override_settings(ROOT_URLCONF=INTERNAL_URLS):
        late = client.post(f"{BASE}agent-turns/{lost.pk}/report", REPORT, format="json")
        again = client.post(f"{BASE}agent-turns/{reported.pk}/report", REPORT, format="json")
    assert late.status_code == 409 and late.json()["error"]["code"] == TURN_LOST
    assert "deadline" in late.json()["error"]["message"]
    assert again.status_code == 409 and again.json()["error"]["code"] == "run_not_active"
    after = Run.objects.get(pk=lost.pk)
    assert (after.status, after.error, after.output, after.tokens, after.finished_at) == (
        before.status, before.error, before.output, before.tokens, before.finished_at)
    assert rollup_rows() == counted


def test_operations_count_a_lost_turn_as_an_error(api: Api, carol: User, bob: User,
                                                  acme: Project) -> None:
    agent, version = _agent(carol, acme, timeout_seconds=60)
    done = _opened(agent, version, 1)
    do_report_turn(agent, done.pk, TurnReport("completed", 20, 2, "ok"))
    _opened(agent, version, _late(60))
    viewer = api.client_for(bob)

    def totals() -> dict[str, Any]:
        page = viewer.get(f"/api/v1/agents/{agent.pk}/operations?hours=1")
        assert page.status_code == 200
        return dict(page.json()["totals"])

    stuck = totals()  # the unreported turn: a request, never an error
    assert (stuck["requests"], stuck["errors"], stuck["success_rate"]) == (2, 0, 1.0)
    assert do_end_lost_turns() == 1
    ended = totals()
    assert (ended["requests"], ended["errors"], ended["success_rate"]) == (2, 1, 0.5)
    overview = viewer.get(f"/api/v1/agent-designs/overview?project_id={acme.pk}").json()
    assert overview["failures_by_reason"] == {TURN_LOST: 1}


def test_a_turn_waiting_on_a_person_is_not_lost_before_its_approval_can_end(
        carol: User, acme: Project) -> None:
    # The run's clock stands still while an approval waits (runner.clock), so a turn of
    # this graph may rightly run 60 s plus the approval's 200 s wait and its grace.
    graph = linear({"id": "gate", "kind": "approval",
                    "config": {"message": "ok?", "timeout_seconds": "200"}})
    for edge in graph["edges"]:
        if edge["from"] == "gate":
            edge["from_port"] = "approved"
    version = published(carol, acme, graph)
    agent = agent_of(version, "agent-approval")
    waits = person_waits(version.artifact["graph"], {})
    assert waits > 200
    waiting = _opened(agent, version, _late(60))  # past a graph without approvals' deadline
    lost = _opened(agent, version, _late(60) + waits)

    assert do_end_lost_turns() == 1
    assert Run.objects.get(pk=waiting.pk).status == "running"
    assert Run.objects.get(pk=lost.pk).error == {"code": TURN_LOST, "message": MESSAGE}
