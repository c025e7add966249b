"""Secret patterns are RE2 on both sides, with one engine (contracts.text.compile_re2)
and one redactor: before, the runner compiled KIONGA_SECRET_PATTERNS with Python's
`re` although the gateway validates them as RE2, so an RE2 pattern failed every run
and a backtracking one could freeze it."""

from __future__ import annotations

from engine_kit import chain, run
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from contracts.text import utf8_safe
from runner.redact import REDACTED, Redactor, StreamRedactor

# Valid RE2, refused by Python's re (no \p classes there).
RE2_ONLY = r"\p{Lu}{3}-\d{4}"


def test_it_redacts_with_a_pattern_only_re2_accepts() -> None:
    done = run(chain(("p", "prompt", {"template": "id {input}"})), "ABC-1234 ok",
               secret_patterns=[RE2_ONLY])
    assert done.result.status == "completed"
    assert done.result.output == f"id {REDACTED} ok"


def test_it_refuses_a_pattern_re2_does_not_accept_before_any_node() -> None:
    done = run(chain(), "x", secret_patterns=[r"secret(?=x)"])  # a lookahead: Python only
    assert done.terminal["reason"] == "invalid_request"
    assert done.terminal["error"]["message"].startswith("a secret pattern is not valid RE2: ")
    assert done.ran() == []


def test_it_finishes_a_backtracking_worst_case() -> None:
    # Python's re takes exponential time for these on "aaa…ab"; RE2 is linear.
    text = "a" * 30_000 + "b"
    done = run(chain(("p", "prompt", {"template": "{input}"})), text,
               secret_patterns=[r"(a+)+$", r"(a|aa)+c"])
    assert done.result.status == "completed"
    assert done.completed("p")["preview"] == text[:2000]


secrets = st.text(st.characters(categories=["L", "N"]), min_size=4, max_size=12)
texts = st.text(st.one_of(st.characters(), st.characters(categories=["Cs"]), st.just(" ")))


@settings(deadline=None)  # a shared machine: timing is not the property
@given(texts, secrets, texts)
def test_it_hides_a_literal_secret_in_any_text(before: str, secret: str, after: str) -> None:
    assume(secret not in REDACTED)  # "[redacted]" itself would look like it
    redacted = Redactor([secret]).redact(before + secret + after)
    assert utf8_safe(secret) not in redacted


words = st.sampled_from(["a", "sk-", "AbCdEf0123456789xyz", "Bearer", "tok.en", " ", "  ",
                         "\n", "TOPSECRET", "TOP", "SECRET", "é", "x y"])


@settings(deadline=None)  # a shared machine: timing is not the property
@given(st.lists(words, max_size=30), st.data())
def test_it_streams_what_it_would_redact_at_once(parts: list[str], data: st.DataObject) -> None:
    text = "".join(parts)
    redactor = Redactor(["TOPSECRET", "x y"], [r"\d{4}-\d{4}"])
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    stream = StreamRedactor(redactor)
    streamed = "".join(stream.feed(c) for c in chunks) + stream.flush()
    assert streamed == redactor.redact(text)
