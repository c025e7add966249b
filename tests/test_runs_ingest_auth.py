"""Only the run's runner can have an event stored: an entry without the MAC of the run's
event key (forged by anything else that can write to Redis) is dead-lettered and
changes nothing, and a duplicate seq — even an authentic one — cannot change a run."""

from typing import Any

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runner import protocol
from runs.event_keys import event_key
from runs.models import Run
from tests.ingest_helpers import dead_letters, drain, events, fields, make_run, send, seqs

pytestmark = pytest.mark.django_db(transaction=True)

FORGED = events("run.started", "node.started", "run.completed")[2]


def _forge(stream: redis.Redis, victim: Run, mac: bytes | None) -> None:
    forged: dict[Any, Any] = {b"run": str(victim.pk).encode(),
                              b"e": protocol.encode_event(FORGED).encode()}
    if mac is not None:
        forged[b"mac"] = mac
    stream.xadd(protocol.INGEST_STREAM, forged)


def _assert_untouched(victim: Run, stream: redis.Redis) -> None:
    victim.refresh_from_db()
    assert victim.status == "running" and victim.output is None and seqs(victim) == [0, 1]
    assert {letter[b"reason"] for letter in dead_letters(stream)} == {b"bad_mac"}
    assert stream.xpending(protocol.INGEST_STREAM, protocol.INGEST_GROUP)["pending"] == 0


@pytest.mark.allow_output  # the refused entries are logged
@pytest.mark.parametrize("forgery", ["missing", "other_run_key", "other_run_mac", "no_key"])
def test_it_refuses_a_forged_event_for_another_run(
        alice: Any, acme: Any, mallory: Any, evil: Any, stream: redis.Redis,
        caplog: pytest.LogCaptureFixture, forgery: str) -> None:
    victim, own = make_run(alice, acme), make_run(mallory, evil)
    send(stream, victim, events("run.started", "node.started"))
    drain(stream)
    encoded = protocol.encode_event(FORGED).encode()
    macs = {
        "missing": None,
        # Mallory's runner holds her run's key, never alice's.
        "other_run_key": protocol.event_mac(event_key(str(own.pk)), str(victim.pk),
                                            encoded).encode(),
        "other_run_mac": fields(str(own.pk), FORGED)["mac"].encode(),
        "no_key": protocol.event_mac(b"", str(victim.pk), encoded).encode(),
    }
    _forge(stream, victim, macs[forgery])
    drain(stream)
    _assert_untouched(victim, stream)
    assert "bad_mac: 1" in caplog.text


@pytest.mark.allow_output
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mac=st.binary(max_size=80))
def test_it_refuses_any_mac_but_the_runs(alice: Any, acme: Any, stream: redis.Redis,
                                         caplog: pytest.LogCaptureFixture, mac: bytes) -> None:
    stream.delete(protocol.DEAD_LETTER_STREAM)
    victim = make_run(alice, acme)
    send(stream, victim, events("run.started", "node.started"))
    _forge(stream, victim, mac)
    drain(stream)
    _assert_untouched(victim, stream)
    caplog.clear()


def test_it_never_lets_a_duplicate_seq_change_a_run(alice: Any, acme: Any,
                                                    stream: redis.Redis) -> None:
    run = make_run(alice, acme)
    send(stream, run, events("run.started", "node.started"))
    drain(stream)
    # An authentic entry repeating seq 1 as another event (a bug, a replay): seq 1 is
    # stored already, so nothing of it is stored or applied.
    duplicate = {**FORGED, "seq": 1}
    send(stream, run, [duplicate])
    drain(stream)
    run.refresh_from_db()
    assert (run.status, run.output) == ("running", None)
    assert run.events.get(seq=1).type == "node.started"
    send(stream, run, [{**FORGED, "seq": 2, "output": "real"}])
    drain(stream)
    run.refresh_from_db()
    assert (run.status, run.output, seqs(run)) == ("completed", "real", [0, 1, 2])
