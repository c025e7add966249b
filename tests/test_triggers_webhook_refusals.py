"""What a webhook delivery is refused for, before any turn starts: a disabled webhook
(409 trigger_disabled, after the signature), a body over the bound (413), a body that is
not UTF-8 or no delivery ID (400), another webhook's secret (401), a schedule's ID (404).
The refusals open no turn; enabling the webhook again lets the same delivery in."""

from __future__ import annotations

import time

from django.contrib.auth.models import User

from kionga.models import Project
from runs.models import Run
from tests.agent_key_helpers import deployed_agent
from tests.conftest import Api
from tests.trigger_helpers import signed
from triggers.actions import do_create, do_update
from triggers.models import Trigger
from triggers.webhooks import DELIVERY_HEADER, MAX_BODY_BYTES, SIGNATURE_HEADER, sign


def post(api: Api, path: str, body: bytes, headers: dict[str, str]) -> object:
    sent = {name: value for name, value in headers.items() if name != "Content-Type"}
    return api.anon().post(path, body, content_type="application/octet-stream", headers=sent)


def test_refused_deliveries_start_nothing(api: Api, carol: User, acme: Project) -> None:
    agent = deployed_agent(carol, acme)
    hook = do_create(carol, agent, {"kind": "webhook", "name": "a"})
    other = do_create(carol, agent, {"kind": "webhook", "name": "b"})
    schedule = do_create(carol, agent, {"kind": "schedule", "name": "s", "cron": "0 9 * * *"})
    secret, path = hook["secret"], hook["path"]
    body = b'{"event": "paid"}'
    do_update(carol, Trigger.objects.get(pk=hook["id"]), {"enabled": False})
    api.assert_error(post(api, path, body, signed(secret, body, "d1")), 409, "trigger_disabled")
    # Disabled or not, a wrong signature is a wrong signature.
    api.assert_error(post(api, path, body, signed(other["secret"], body, "d1")), 401,
                     "invalid_signature")
    do_update(carol, Trigger.objects.get(pk=hook["id"]), {"enabled": True})
    big = b"x" * (MAX_BODY_BYTES + 1)
    api.assert_error(post(api, path, big, signed(secret, big, "d2")), 413, "payload_too_large")
    latin = "café".encode("latin-1")
    api.assert_error(post(api, path, latin, signed(secret, latin, "d3")), 400,
                     "invalid_request")
    unnamed = {SIGNATURE_HEADER: sign(secret, int(time.time()), body)}
    api.assert_error(post(api, path, body, unnamed), 400, "invalid_request")
    api.assert_error(post(api, path, body, {**unnamed, DELIVERY_HEADER: "has space"}), 400,
                     "invalid_request")
    api.assert_error(post(api, f"/api/v1/hooks/{schedule['id']}", body,
                          signed(secret, body, "d4")), 404, "not_found")
    assert not Run.objects.exists()
    accepted = post(api, path, body, signed(secret, body, "d1"))
    assert accepted.status_code == 202, accepted.content  # type: ignore[attr-defined]
    assert Run.objects.get().input == '{"event": "paid"}'
