"""The runtime runs a triggered turn only when the gateway lets it claim the turn
(triggers/firings.py `do_claim`): `POST /triggered-turns` with an ID the gateway never
opened is 404, with a turn already claimed 409 `turn_claimed` — neither runs anything;
a caller's turn (opened with an API key) cannot be claimed as a triggered one; and
anything but a UUID is 400 (never a path the runtime would post to)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from contracts.agent_runtime import TRIGGERED_TURNS_PATH
from deployments.api_keys import do_create_key
from runs.models import Run
from tests.agent_local_helpers import until
from tests.conftest import Api
from tests.stack import Stack
from tests.trigger_helpers import deploy_locally, local_runtimes, signed

pytestmark = pytest.mark.django_db(transaction=True)


def test_only_a_turn_the_gateway_opened_runs_and_only_once(
        stack: Stack, api: Api, alice: Any, acme: Any, settings: Any,
        agents_dir: Path) -> None:
    agent = deploy_locally(alice, acme, settings, agents_dir)
    hook = api.client_for(alice).post(f"/api/v1/agents/{agent.pk}/triggers",
                                      {"kind": "webhook", "name": "w"}, format="json").json()
    body = json.dumps({"n": 1}).encode()
    with local_runtimes(stack, agents_dir, agent) as runtime:
        claim = f"{runtime}{TRIGGERED_TURNS_PATH}"
        forged = httpx.post(claim, json={"turn_id": str(uuid.uuid4())}, timeout=30)
        assert (forged.status_code, forged.json()["error"]["code"]) == (404, "not_found")
        answer = httpx.post(f"{stack.base_url}{hook['path']}", content=body,
                            headers=signed(hook["secret"], body, "once"), timeout=30).json()
        until(lambda: Run.objects.filter(pk=answer["turn_id"], status="completed").exists())
        again = httpx.post(claim, json={"turn_id": answer["turn_id"]}, timeout=30)
        assert (again.status_code, again.json()["error"]["code"]) == (409, "turn_claimed")
        key = do_create_key(alice, agent, "caller", 60, None)["key"]
        called = httpx.post(f"{runtime}/turns", json={"input": "hi"}, timeout=30,
                            headers={"Authorization": f"Bearer {key}"}).json()
        assert called["status"] == "completed"
        stolen = httpx.post(claim, json={"turn_id": called["turn_id"]}, timeout=30)
        assert stolen.status_code == 404
        for wrong in ({"turn": 1}, {"turn_id": 7}, {"turn_id": "../../models/m/predict"}):
            assert httpx.post(claim, json=wrong, timeout=30).status_code == 400
    assert Run.objects.filter(agent=agent).count() == 2
    assert Run.objects.get(pk=answer["turn_id"]).output == 'Hook: {"n": 1}'
