"""A signed webhook starts a turn of a deployed agent (triggers/webhooks.py).

On a private stack (gateway, internal listener, gateway worker) whose processes know the
local runtime's folder, with the agent deployed there and run by `python -m
agents.local`: a delivery signed with the trigger's secret is 202 and its body becomes
the input of a turn that the runtime claims, runs and reports; the turn records the
trigger and the delivery. The same delivery ID again is 200 with the first answer and
starts nothing; a wrong signature is 401 invalid_signature, a timestamp outside the
replay window 401 signature_expired, an unknown webhook 404 — none of them starts a
turn."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from runs.models import Run
from tests.agent_local_helpers import until
from tests.conftest import Api
from tests.stack import Stack
from tests.trigger_helpers import deploy_locally, local_runtimes, signed
from triggers.models import Firing
from triggers.webhooks import REPLAY_WINDOW_SECONDS

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_signed_delivery_starts_one_turn_of_the_agent(
        stack: Stack, api: Api, alice: Any, acme: Any, settings: Any,
        agents_dir: Path) -> None:
    agent = deploy_locally(alice, acme, settings, agents_dir)
    created = api.client_for(alice).post(f"/api/v1/agents/{agent.pk}/triggers",
                                         {"kind": "webhook", "name": "orders"}, format="json")
    assert created.status_code == 201, created.content
    hook, secret = created.json(), created.json()["secret"]
    url = f"{stack.base_url}{hook['path']}"
    body = json.dumps({"order": 42}).encode()
    with local_runtimes(stack, agents_dir, agent):
        first = httpx.post(url, content=body, headers=signed(secret, body, "evt_1"), timeout=30)
        assert first.status_code == 202, first.text
        answer = first.json()
        assert (answer["trigger_id"], answer["delivery_id"]) == (hook["id"], "evt_1")
        turn = until(lambda: Run.objects.filter(pk=answer["turn_id"], status="completed")
                     .first())
        assert (turn.agent_id, turn.input, turn.output) == (
            agent.pk, '{"order": 42}', 'Hook: {"order": 42}')
        assert turn.version_id == str(agent.version_id) and turn.latency_ms is not None
        firing = Firing.objects.get(turn=turn)
        assert (str(firing.trigger_id), firing.delivery_id) == (hook["id"], "evt_1")

        # The sender retries the same delivery (a lost answer): the first answer, no turn.
        again = httpx.post(url, content=body, headers=signed(secret, body, "evt_1"),
                           timeout=30)
        assert again.status_code == 200 and again.json() == answer

        refusals = [
            (url, signed("whsec_not-the-secret", body, "evt_2"), 401, "invalid_signature"),
            (url, {**signed(secret, body, "evt_3"), "Kionga-Signature": "v1=abc"}, 401,
             "invalid_signature"),
            (url, signed(secret, body, "evt_4", at=int(time.time()) - REPLAY_WINDOW_SECONDS
                         - 30), 401, "signature_expired"),
            (f"{stack.base_url}/api/v1/hooks/7d0c2b8e-0000-4000-8000-000000000000",
             signed(secret, body, "evt_5"), 404, "not_found"),
        ]
        for target, headers, status, code in refusals:
            refused = httpx.post(target, content=body, headers=headers, timeout=30)
            assert refused.status_code == status, refused.text
            assert refused.json()["error"]["code"] == code
        # A body changed after signing is a wrong signature too.
        tampered = httpx.post(url, content=body + b" ", headers=signed(secret, body, "evt_6"),
                              timeout=30)
        assert tampered.status_code == 401
        assert Run.objects.filter(agent=agent).count() == 1
        assert Firing.objects.count() == 1
