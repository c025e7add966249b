"""Reading a run with a token answers 200 and records the token's use in the run's
project, although the run and its events are read in one READ ONLY snapshot
(kionga.snapshot): the use is written right after the snapshot ends."""

from __future__ import annotations

from typing import Any

import pytest

from kionga.models import ApiToken, TokenUse
from tests.conftest import Api
from tests.ingest_helpers import make_run
from tests.projects_helpers import bearer

pytestmark = pytest.mark.django_db(transaction=True)  # the snapshot is the outermost one


def test_a_token_reads_a_run_and_its_use_is_recorded(api: Api, alice: Any, acme: Any) -> None:
    raw = api.token_for(alice)
    run = make_run(alice, acme)
    answer = bearer(raw).get(f"/api/v1/agent-designs/{run.design_id}/runs/{run.pk}")
    assert answer.status_code == 200, answer.content
    token = ApiToken.objects.get(user=alice)
    assert TokenUse.objects.filter(token=token, project=acme).exists()
