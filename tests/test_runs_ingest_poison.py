"""One bad event never stops event storage: it is dead-lettered with its reason, its run
is failed (`event_rejected`), and every other event of the batch is stored."""

import json
from typing import Any

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contracts.schemas import schema_errors
from runner import protocol
from runs.models import Run
from tests.ingest_helpers import AT, dead_letters, drain, events, fields, make_run, send, seqs
from tests.ingest_helpers import stream as stream_fixture

pytestmark = pytest.mark.django_db(transaction=True)
stream = stream_fixture

COMPLETE = ("run.started", "node.started", "node.started", "run.completed")


def _event(**changes: Any) -> dict[str, Any]:
    return {"seq": 1, "type": "node.started", "at": AT, "node_id": "n", "attempt": 1, **changes}


def _json(value: Any) -> bytes:
    return json.dumps(value).encode()  # ASCII escapes: \u0000, lone \ud800 reach PostgreSQL


BAD_TEXT = st.sampled_from(["\x00", "\ud800", "\udfff", "a\x00b", "x\udbffy"])
POISON = st.one_of(
    st.binary(max_size=40).filter(lambda b: not b.strip().startswith((b"{", b"["))),
    st.just(b'{"seq": 1, "type": "node.started"'),
    st.just(b"\xed\xa0\x80"),  # a surrogate as (invalid) UTF-8
    st.one_of(st.integers(), st.text(max_size=10), st.lists(st.integers(), max_size=3),
              st.none()).map(_json),
    st.builds(lambda text, key: _json(_event(**{key: text})), BAD_TEXT,
              st.sampled_from(["node_id", "output", "at"])),
    st.builds(lambda text: _json(_event(type="run.completed", output=text,
                                        usage={"tokens": 1})), BAD_TEXT),
    st.builds(lambda text: _json(_event(type=text)), BAD_TEXT),
    st.one_of(st.integers(min_value=2**31), st.integers(max_value=-1), st.floats(),
              st.booleans(), st.text(max_size=5)).map(lambda seq: _json(_event(seq=seq))),
    st.one_of(st.integers(), st.none(), st.text(min_size=33, max_size=60))
      .map(lambda kind: _json(_event(type=kind))),
    st.sampled_from(["2026-02-30T10:00:00", "9999-99-99T99:99:99"])
      .map(lambda at: _json(_event(type="run.completed", at=at, usage={"tokens": 1}))),
)


@pytest.mark.allow_output  # each set-aside entry is logged (without its content)
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(poison=POISON)
def test_it_sets_a_poisoned_event_aside_and_stores_the_rest(
        alice: Any, acme: Any, stream: redis.Redis, caplog: pytest.LogCaptureFixture,
        poison: bytes) -> None:
    stream.delete(protocol.DEAD_LETTER_STREAM)
    good, bad, other = (make_run(alice, acme) for _ in range(3))
    sent = events(*COMPLETE)
    send(stream, good, sent[:2])
    send(stream, bad, sent[:1])
    stream.xadd(protocol.INGEST_STREAM, fields(str(bad.pk), poison))
    send(stream, bad, sent[2:])  # after the poison: never stored, the run is failed
    send(stream, other, sent)
    send(stream, good, sent[2:])
    drain(stream)

    for run in (good, other):
        run.refresh_from_db()
        assert (run.status, seqs(run)) == ("completed", [0, 1, 2, 3])
    bad.refresh_from_db()
    assert bad.status == "failed" and bad.error is not None
    assert bad.error["code"] == "event_rejected"
    assert seqs(bad) == [0, 1]
    failed = bad.events.get(seq=1).data
    assert failed["reason"] == "event_rejected" and schema_errors("run-event.v1", failed) == []
    [letter] = dead_letters(stream)
    assert letter[b"run"] == str(bad.pk).encode() and letter[b"e"] == poison
    assert letter[b"reason"] in {b"invalid_json", b"not_an_event", b"invalid_seq",
                                 b"invalid_type", b"refused_by_database"}
    assert stream.xpending(protocol.INGEST_STREAM, protocol.INGEST_GROUP)["pending"] == 0
    # The runner of the failed run is told to stop.
    assert stream.exists(protocol.cancel_key(str(bad.pk)))
    assert "dead-lettered 1 event entries" in caplog.text
    caplog.clear()


@pytest.mark.allow_output
def test_it_keeps_storing_after_a_poisoned_batch(alice: Any, acme: Any, stream: redis.Redis,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    bad, later = make_run(alice, acme), make_run(alice, acme)
    stream.xadd(protocol.INGEST_STREAM, fields(str(bad.pk), _json(_event(seq=0, node_id="\x00"))))
    drain(stream)
    send(stream, later, events(*COMPLETE))
    drain(stream)
    assert Run.objects.get(pk=later.pk).status == "completed"
    assert Run.objects.get(pk=bad.pk).status == "failed"
    assert "refused_by_database: 1" in caplog.text
