"""Every text a node produces, stores or streams is bounded, and a CPU-bound run stops
at its deadline (before: a 16,000-character template of `{input}`s turned 100 KB into
hundreds of MB, carried whole by the model's `text` and deltas)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from engine_kit import chain, run

from contracts.registry import LIMITS
from runner import clock
from runner.redact import TRUNCATED, Redactor, StreamRedactor

TEXT_BYTES = LIMITS["model_text_bytes"]


def test_it_refuses_a_template_that_would_exceed_the_value_limit() -> None:
    done = run(chain(("p", "prompt", {"template": "{input}" * 200})), "a" * 10_000)
    assert done.terminal["reason"] == "node_failed"
    assert done.terminal["error"] == {
        "code": "node_error",
        "message": "the filled template would have 2,000,000 characters (200 × {input} of "
                   "10,000); at most 1,000,000"}


def test_it_fills_a_template_up_to_the_value_limit() -> None:
    text = "a" * (LIMITS["value_chars"] // 2)
    done = run(chain(("p", "prompt", {"template": "{input}{input}"})), text)
    assert done.result.status == "completed"


def test_it_truncates_model_text_and_deltas_and_trips_max_tokens() -> None:
    words = ("x" * 99 + " ") * 3_000  # 300 KB: 3,000 words
    done = run(chain(("m", "model"), settings={"max_tokens": 5_000}), words)
    completed = done.completed("m")
    text = completed["text"]
    assert text.endswith(TRUNCATED)
    assert len(text.encode("utf-8")) <= TEXT_BYTES
    assert ("mock: " + words).startswith(text.removesuffix(TRUNCATED))
    deltas = "".join(e["delta"] for e in done.of("node.delta", "m"))
    assert deltas.endswith(TRUNCATED)
    assert len(deltas.encode("utf-8")) <= TEXT_BYTES
    # The mock counts words in and out (6,001 tokens): max_tokens trips.
    assert completed["usage"] == {"tokens": 6_001}
    assert (done.terminal["reason"], done.terminal["budget"]) == ("budget_exceeded", "max_tokens")


def test_it_keeps_a_model_text_under_the_limit_whole() -> None:
    done = run(chain(("m", "model")), "short answer")
    assert done.completed("m")["text"] == "mock: short answer"
    assert not [e for e in done.of("node.delta") if TRUNCATED in e["delta"]]


@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_it_bounds_a_stream_of_one_endless_word(chunk: int) -> None:
    stream = StreamRedactor(Redactor())
    word = "x" * (TEXT_BYTES + 10_000)
    pieces = [stream.feed(word[i:i + chunk]) for i in range(0, len(word), chunk)]
    pieces.append(stream.flush())
    # Nothing of the held-back word is released (it might still grow into a secret).
    assert "".join(pieces) == TRUNCATED


def test_it_never_releases_half_a_secret_at_the_stream_limit() -> None:
    secret = "sk-" + "A" * 40
    stream = StreamRedactor(Redactor(), limit=100)
    text = "w " * 40 + secret + " tail"
    out = "".join(stream.feed(c) for c in text) + stream.flush()
    assert out.endswith(TRUNCATED)
    assert "sk-" not in out and "AAA" not in out


def test_it_stops_a_cpu_bound_run_at_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    # A clock that moves 0.3 s each time the run looks at it: pure nodes never yield,
    # so only the check between nodes can notice the deadline.
    ticks = itertools.count()
    monkeypatch.setattr(clock, "monotonic", lambda: next(ticks) * 0.3)
    middle: list[Any] = [(f"p{i:02}", "prompt", {"template": "{input}"}) for i in range(20)]
    done = run(chain(*middle, settings={"timeout_seconds": 1}))
    assert (done.terminal["reason"], done.terminal["budget"]) == ("timeout", "timeout_seconds")
    assert done.terminal["error"] == {
        "code": "timeout", "message": "the run took longer than timeout_seconds (1 s)"}
    assert "output" not in done.ran()
    assert len(done.ran()) < 6
