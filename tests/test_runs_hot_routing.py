"""Which requests the runs app's hot routes serve (runs.hot.asgi.match) and which go
to Django, and the hot start's body rules (runs.hot.body): a body is taken only when
the API's serializer would take it, with the same values."""

from __future__ import annotations

import json
import uuid
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework.exceptions import ValidationError

from kionga.request_body import parse as drf_parse
from runs.hot import asgi, body
from runs.serializers import MAX_INPUT_CHARS, StartRunSerializer
from runs.start import StartRequest

DESIGN, RUN = uuid.uuid4(), uuid.uuid4()
TOKEN = "kio_" + "a" * 43


def scope(method: str, path: str, **headers: str) -> dict[str, Any]:
    return {"type": "http", "method": method, "path": path,
            "headers": [(k.replace("_", "-").lower().encode(), v.encode())
                        for k, v in headers.items()]}


RUNS = f"/api/v1/agent-designs/{DESIGN}/runs"
EVENTS = f"{RUNS}/{RUN}/events"


def test_bearer_starts_and_streams_are_hot() -> None:
    auth = {"authorization": f"Bearer {TOKEN}"}
    assert asgi.match(scope("POST", RUNS, **auth)) is asgi.start_run
    assert asgi.match(scope("POST", RUNS, accept="text/event-stream", **auth)) is asgi.start_run
    assert asgi.match(scope("GET", EVENTS, accept="text/event-stream", **auth)) is asgi.follow_run


def test_everything_else_goes_to_django() -> None:
    auth = {"authorization": f"Bearer {TOKEN}"}
    for other in (
        scope("POST", RUNS),  # a session (the canvas), or no one
        scope("POST", RUNS, authorization="Bearer not-a-kionga-token"),
        scope("POST", RUNS, cookie="sessionid=x", **auth),
        scope("POST", RUNS, idempotency_key="k1", **auth),
        scope("GET", RUNS, **auth),  # the runs list
        scope("GET", EVENTS, **auth),  # events as JSON pages
        scope("POST", RUNS.upper(), **auth),
        scope("POST", RUNS + "/", **auth),
        scope("GET", f"{RUNS}/{RUN}", **auth),
    ):
        assert asgi.match(other) is None, other


def _drf(data: Any) -> StartRequest | None:
    try:
        return StartRequest.of(drf_parse(StartRunSerializer, data))
    except ValidationError:
        return None


texts = st.text(max_size=40) | st.sampled_from(["", "\x00", "a\ud800b", "x" * MAX_INPUT_CHARS,
                                                "x" * (MAX_INPUT_CHARS + 1)])
values = (st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False)
          | texts | st.lists(st.integers(), max_size=2) | st.dictionaries(texts, st.integers(),
                                                                            max_size=1))
keys = st.sampled_from(["input", "allow_side_effects", "stop_after", "revision", "session_id",
                        "history", "other"])


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(keys, values, max_size=5) | values)
def test_a_body_is_hot_only_when_the_serializer_takes_it_alike(data: Any) -> None:
    try:
        raw = json.dumps(data).encode()
    except (ValueError, UnicodeEncodeError):
        return
    hot = body.parse(raw)
    if hot is not None:
        assert hot == _drf(json.loads(raw))


def test_the_usual_bodies_are_hot() -> None:
    for usual in ({}, {"input": "hi"}, {"input": "hi", "allow_side_effects": True,
                                         "stop_after": "model", "revision": 2},
                  {"input": "", "session_id": None, "history": None}):
        assert body.parse(json.dumps(usual).encode()) == _drf(usual)
    unusual: Any
    for unusual in ({"input": "hi", "session_id": "s1"}, {"history": []}, {"input": 3},
                    {"nope": 1}, [1]):
        assert body.parse(json.dumps(unusual).encode()) is None
    assert body.parse(b"{not json") is None

