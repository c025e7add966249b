"""Upstream answers are scrubbed by the runner's Redactor (one redactor, one rule for
what counts as a secret): any JSON an upstream sends comes back without the secret,
in values and keys, whatever else the text holds."""

from __future__ import annotations

from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kionga.upstream import scrub, secret_values
from runner.redact import MIN_SECRET_CHARS, REDACTED

secrets = st.text(st.characters(categories=["L", "N", "P"]), min_size=MIN_SECRET_CHARS,
                  max_size=16)
texts = st.text(st.one_of(st.characters(), st.characters(categories=["Cs"])), max_size=20)


@st.composite
def answers(draw: st.DrawFn, secret: str) -> Any:
    """JSON where the secret may appear inside any string, key or value."""
    leaf = st.one_of(st.none(), st.integers(), texts,
                     st.builds(lambda a, b: a + secret + b, texts, texts))
    return draw(st.recursive(leaf, lambda inner: st.lists(inner, max_size=3)
                             | st.dictionaries(leaf.filter(lambda v: isinstance(v, str)),
                                               inner, max_size=3), max_leaves=8))


def strings(value: Any) -> list[str]:
    """Every string of a JSON value, keys included (what a reader sees as text: the JSON
    text itself would show "\\u0000" for a NUL, which holds the secret "0000")."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for item in value for text in strings(item)]
    if isinstance(value, dict):
        return [text for k, v in value.items() for text in (k, *strings(v))]
    return []


@settings(deadline=None)  # a shared machine: timing is not the property
@given(secrets, st.data())
def test_it_hides_every_secret_the_runner_would(secret: str, data: st.DataObject) -> None:
    assume(secret.strip() == secret and " " not in secret and secret not in REDACTED)
    answer = data.draw(answers(secret))
    scrubbed = scrub(answer, secret_values([secret]))
    assert not [text for text in strings(scrubbed) if secret in text]


def test_it_hides_the_credential_of_a_scheme_header() -> None:
    scrubbed = scrub({"echo": "got Token abcd-1234 and abcd-1234"},
                     secret_values(["Token abcd-1234"]))
    assert scrubbed == {"echo": f"got {REDACTED} and {REDACTED}"}  # longest first
