"""The task's secrets (run credential, event key, slot lease token) are sealed for the
runner: a reader of the broker without the runner token learns none, and a changed seal
is refused."""

import base64
import json
from typing import Any

import pytest
import redis
from hypothesis import given
from hypothesis import strategies as st

from kionga.tokens import hash_token
from runner import protocol
from runner.settings import load_settings
from runner.task_payload import NO_SECRETS, PayloadError, parse_task, secrets_of, task_secrets
from runner.task_seal import SealError, seal, unseal
from runs.event_keys import event_key
from runs.models import Run
from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.runs_helpers import RUNNER_TOKEN, queued_tasks, start_url

TOKEN = "a-runner-token-0123456789"


def _settings() -> Any:
    return load_settings({"KIONGA_DESIGNER_RUNNER_TOKEN": RUNNER_TOKEN})


@pytest.mark.django_db(transaction=True)
def test_it_keeps_the_credential_event_key_and_lease_out_of_the_broker(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    run_id = api.client_for(alice).post(start_url(design), {"input": "x"},
                                        format="json").json()["id"]
    [(payload, _signature)] = queued_tasks(rds)
    raw = json.dumps(payload)
    secrets = task_secrets(payload, RUNNER_TOKEN)
    assert Run.objects.get(pk=run_id).credential.token_hash == hash_token(
        secrets.credential)
    assert secrets.event_key == event_key(run_id)
    # The slot's lease token, as the admission issued it.
    assert rds.hget(protocol.LEASES_KEY, run_id) == secrets.lease.encode()
    assert protocol.slot_alive(rds, run_id) and len(secrets.lease) >= 32
    assert secrets.credential not in raw and secrets.event_key.hex() not in raw
    assert secrets.lease not in raw
    assert "credential" not in payload
    assert parse_task(payload, _settings()).credential == secrets.credential
    assert parse_task(payload, _settings()).lease == secrets.lease
    with pytest.raises(PayloadError):
        task_secrets(payload, "another-runner-token-0123")
    assert secrets_of(payload, "another-runner-token-0123") == NO_SECRETS


def test_it_derives_one_key_per_run(settings: Any) -> None:
    assert event_key("run-a") != event_key("run-b")
    first = event_key("run-a")
    settings.SECRET_KEY = "another-secret-key-" + "x" * 40
    assert event_key("run-a") != first


@given(values=st.dictionaries(st.text(max_size=20), st.text(max_size=300), max_size=4),
       context=st.text(max_size=40))
def test_it_opens_what_it_sealed_only_with_its_token_and_context(
        values: dict[str, str], context: str) -> None:
    sealed = seal(values, TOKEN, context)
    assert unseal(sealed, TOKEN, context) == values
    with pytest.raises(SealError):
        unseal(sealed, TOKEN + "x", context)
    with pytest.raises(SealError):
        unseal(sealed, TOKEN, context + "x")


@given(position=st.integers(min_value=0), flip=st.integers(min_value=1, max_value=255))
def test_it_refuses_any_changed_byte(position: int, flip: int) -> None:
    raw = bytearray(base64.urlsafe_b64decode(seal({"credential": "krc_x"}, TOKEN, "r")))
    raw[position % len(raw)] ^= flip
    with pytest.raises(SealError):
        unseal(base64.urlsafe_b64encode(bytes(raw)).decode(), TOKEN, "r")


@given(junk=st.text(max_size=200))
def test_it_refuses_junk_without_crashing(junk: str) -> None:
    with pytest.raises(SealError):
        unseal(junk, TOKEN, "r")
