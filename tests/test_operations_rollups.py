"""The rollups the metrics read: every end path (the ingester's batches, a reported turn)
counts each run once, exactly as a rebuild from the runs would; runs still active are
read from the runs; old slots are pruned."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.utils import timezone

from kionga.models import Project
from operations.rollups import KEEP, do_prune, do_rebuild, do_roll_up_ended
from runs import ingest
from runs.agent_turns import TurnReport, do_open_turn, do_report_turn
from runs.models import Run
from tests.ingest_helpers import entries, make_run
from tests.operations_helpers import agent_of, rollup_rows
from tests.versions_helpers import prompt_graph, published


def ending(kind: str, seconds: float, **extra: Any) -> list[dict[str, Any]]:
    start = timezone.now()
    return [{"seq": 0, "type": "run.started", "at": start.isoformat()},
            {"seq": 1, "type": kind, "at": (start + timedelta(seconds=seconds)).isoformat(),
             "usage": {"tokens": 11}, **extra}]


def test_every_end_path_counts_a_run_once_as_a_rebuild_would(
        api: Any, alice: User, carol: User, acme: Project) -> None:
    done, failed, cancelled = (make_run(alice, acme) for _ in range(3))
    batch = [*entries(done, ending("run.completed", 1.25, output="ok")),
             *entries(failed, ending("run.failed", 0.3,
                                     error={"code": "node_error", "message": "x"}))]
    ingest.store_entries(batch)
    ingest.store_entries(batch)  # redelivered: nothing ends twice
    ingest.store_entries(entries(cancelled, [{"seq": 0, "type": "run.cancelled",
                                              "at": timezone.now().isoformat()}]))
    version = published(carol, acme, prompt_graph())
    agent = agent_of(version, "agent-acme")
    for status, error in (("completed", None), ("failed", {"code": "timeout", "message": "t"})):
        turn = do_open_turn(agent, str(version.pk), "hi", "s1")
        do_report_turn(agent, turn.pk, TurnReport(status, 120, 30, "out", error))
    do_open_turn(agent, str(version.pk), "still running", "s2")

    counted = rollup_rows()
    project_rows = [row for row in counted[0] if row[0] == acme.pk and row[1] is None]
    agent_rows = [row for row in counted[0] if row[1] == agent.pk]
    assert sum(row[3] for row in project_rows) == 5  # ended: 3 runs and 2 turns
    assert sum(row[3] for row in agent_rows) == 2
    assert sorted((code, n) for _, _, code, n in counted[1]) == [("node_error", 1),
                                                                 ("timeout", 1)]
    do_rebuild(timezone.now() - KEEP)
    assert rollup_rows() == counted

    page = api.client_for(carol).get(f"/api/v1/agents/{agent.pk}/operations?hours=1").json()
    # The open turn is a request (read from the runs), not yet an ended one.
    assert (page["totals"]["requests"], page["totals"]["errors"]) == (3, 1)
    assert page["totals"]["success_rate"] == 0.5
    assert page["totals"]["tokens"] == 60


def test_it_prunes_slots_older_than_the_longest_window(carol: User, acme: Project) -> None:
    agent = agent_of(published(carol, acme, prompt_graph()), "agent-acme")
    version = str(agent.version_id)
    for _ in range(2):
        turn = do_open_turn(agent, version, "hi", "s")
        do_report_turn(agent, turn.pk, TurnReport("completed", 5, 1))
    assert do_prune(timezone.now()) == 0
    assert do_prune(timezone.now() + KEEP + timedelta(hours=1)) == 2  # project and agent
    assert rollup_rows() == ([], [])


def test_a_batch_from_many_slots_is_upserted_in_chunks(carol: User, acme: Project) -> None:
    """Runs ending together from 400 slots over ~100 latency buckets: 800 rows of
    ~110 values, upserted in several statements (rollups.MAX_PARAMETERS), all counted."""
    version = published(carol, acme, prompt_graph())
    agent = agent_of(version, "agent-acme")
    now = timezone.now()
    runs = [Run(project=acme, agent=agent, design=agent.design, status="failed",
                created_at=now - timedelta(seconds=150 * i), latency_ms=i * 37 % 200_000,
                tokens=1, cost=0, error={"code": f"code{i % 3}"}) for i in range(400)]
    do_roll_up_ended(runs)
    rollups, failures = rollup_rows()
    assert len(rollups) == 800 and sum(row[3] for row in rollups) == 800
    assert sum(row[3] for row in failures) == 400
