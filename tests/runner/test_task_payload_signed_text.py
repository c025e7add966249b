"""A run task's payload travels as its canonical JSON text, signed as sent: the runner
opens exactly what was signed, refuses any change to it, and still opens a payload sent
as an object (a Celery client's send_task) by its canonical JSON."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from contracts.hashing import canonical_json
from runner import task_signature

TOKEN = "runner-token-0123456789abcdef"
PAYLOAD: dict[str, Any] = {"run_id": "r-1", "graph": {"nodes": [{"id": "a"}]},
                           "input": "héllo\u2028", "history": []}


def test_the_signed_text_opens_to_its_payload() -> None:
    text = canonical_json(PAYLOAD)
    assert task_signature.opened(text, task_signature.sign_text(text, TOKEN), TOKEN) == PAYLOAD
    # The same signature as the payload's own: one signing rule for both forms.
    assert task_signature.sign_text(text, TOKEN) == task_signature.sign(PAYLOAD, TOKEN)


def test_a_payload_sent_as_an_object_opens_too() -> None:
    assert task_signature.opened(PAYLOAD, task_signature.sign(PAYLOAD, TOKEN), TOKEN) == PAYLOAD


@given(st.integers(min_value=0), st.characters(codec="utf-8"))
def test_any_change_to_the_text_is_refused(at: int, character: str) -> None:
    text = canonical_json(PAYLOAD)
    signature = task_signature.sign_text(text, TOKEN)
    position = at % len(text)
    changed = text[:position] + character + text[position + 1:]
    if changed != text:
        assert task_signature.opened(changed, signature, TOKEN) is None


def test_signed_text_that_is_not_a_json_object_is_refused() -> None:
    for text in ("[1, 2]", "not json", '"a string"', ""):
        assert task_signature.opened(text, task_signature.sign_text(text, TOKEN), TOKEN) is None


def test_another_token_or_no_signature_is_refused() -> None:
    text = canonical_json(PAYLOAD)
    foreign = task_signature.sign_text(text, "another-token")
    assert task_signature.opened(text, foreign, TOKEN) is None
    assert task_signature.opened(text, None, TOKEN) is None
    assert task_signature.opened(42, task_signature.sign_text(text, TOKEN), TOKEN) is None
