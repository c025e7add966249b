"""An evaluation goes at the runner's pace on the live stack: its judged cases run side
by side up to the project's share of the runner, and with a slow judge (a model
resource on tests/slow_upstream.py, an OpenAI-compatible server on loopback that
answers after JUDGE_SECONDS) it finishes in about (cases ÷ share) × the judge's
latency, each wave paying only the runs' own overhead."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from kionga.resource_models import ModelEndpoint
from tests.conftest import Api
from tests.e2e.conftest import Http
from tests.e2e.helpers import wait_for
from tests.evaluations_helpers import answer_graph, judged
from tests.slow_upstream import Reply, SlowUpstream, serving_slow
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)
JUDGE_SECONDS = 1.5  # below the stack's KIONGA_JUDGE_TIMEOUT_SECONDS=3
CASES = 12
# What a wave may cost beyond the judge's latency: the case's run, the judge run's start
# and its trip through the internal listener, the ends stored and settled (0.8-1.4 s
# measured on a shared, busy 2-core machine) ...
WAVE_OVERHEAD_SECONDS = 2.0
# ... and once, the first runs of processes that had not served one yet (about 1.5 s).
COLD_SECONDS = 3.0
VERDICT = json.dumps({"scores": {"task_completion": 0.9}, "reason": "It answers."})


def test_judged_cases_run_side_by_side_up_to_the_share_at_the_judges_pace(
        stack: Stack, api: Api, alice: Any, acme: Any) -> None:
    http = Http(stack, api.token_for(alice))
    share = (stack.max_runs + 1) // 2  # runs.quota.project_max_runs' default
    judge = SlowUpstream(Reply(latency=JUDGE_SECONDS, chunks=3, text=VERDICT))
    with serving_slow(judge) as url:
        ModelEndpoint.objects.create(project=acme, key="judge", base_url=url,
                                     model_name="judge", secret="sk-judge-0123456789abcdef")
        design_id = http.create_design(acme.pk, answer_graph(), "Paced")
        cases = [judged(f"case-{i}", f"question {i}") for i in range(CASES)]
        put = http.client.put(f"/api/v1/agent-designs/{design_id}/fixtures",
                              json={"revision": 0, "cases": cases})
        assert put.status_code == 200, put.text
        began = time.monotonic()
        started = http.client.post(f"/api/v1/agent-designs/{design_id}/evaluations", json={})
        assert started.status_code == 201, started.text
        url_of = f"/api/v1/agent-evaluations/{started.json()['id']}"
        result = wait_for(lambda: (got := http.client.get(url_of).json())["status"]
                          not in ("queued", "running") and got, timeout=60)
        took = time.monotonic() - began

    assert result["counts"] == {"total": CASES, "passed": CASES, "failed": 0, "cancelled": 0}
    # Every judge asked the upstream; as many at once as the project's share holds.
    assert judge.stats.requests == CASES and judge.stats.peak_in_flight == share
    waves = CASES / share
    # One case at a time would take 12 waves of 2.3 s or more; half the share, 6.
    assert took <= waves * (JUDGE_SECONDS + WAVE_OVERHEAD_SECONDS) + COLD_SECONDS, took
