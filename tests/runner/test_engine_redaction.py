"""Redaction and truncation: no secret reaches any event; previews and outputs are cut."""

from __future__ import annotations

import json
from typing import Any

import pytest
from engine_kit import chain, graph, run

from runner.backends.mock import MockBackend
from runner.inmemory_resources import InMemoryResources
from runner.redact import Redactor, StreamRedactor

SECRET = "s3cr3t-Value-42"
CREDENTIAL = "run-cred-0123456789abcdef"


def everything(done: Any) -> str:
    return json.dumps(done.events, ensure_ascii=False)


def leaky_graph() -> dict[str, Any]:
    """The input reaches every kind of event: previews, model deltas and text, an error
    message on an error port, an approval request and the output."""
    return graph(
        [("input", "input"), ("m", "model"), ("t", "tool", {"tool": "echo"}),
         ("h", "prompt", {"template": "handled {input}"}), ("a", "approval"),
         ("j", "join"), ("output", "output")],
        ["input>m", "input>t", "t.error>h", "m>a", "a.approved>j", "h>j", "j>output"],
    )


@pytest.mark.parametrize(
    ("text", "hidden", "config"),
    [
        (f"my password is {SECRET} ok", SECRET, {"secrets": [SECRET]}),
        (f"the key {CREDENTIAL} here", CREDENTIAL, {}),  # declared by the resource client
        ("token Bearer abc.DEF-123_xyz please", "abc.DEF-123_xyz", {}),
        ("use sk-proj-AbCdEf0123456789xyz now", "AbCdEf0123456789xyz", {}),
        ("card 4111-1111-1111-1111 thanks", "4111-1111-1111-1111",
         {"secret_patterns": [r"\b(?:\d{4}-){3}\d{4}\b"]}),
        ("two words secret phrase inside", "secret phrase",
         {"secrets": ["secret phrase"]}),
    ],
)
def test_it_never_lets_a_secret_reach_an_event(text: str, hidden: str,
                                               config: dict[str, Any]) -> None:
    def echo(value: Any) -> Any:
        raise RuntimeError(f"tool failed on {value}")

    resources = InMemoryResources(functions={"echo": echo}, secrets=[CREDENTIAL],
                                  auto_decision=("approve", ""))
    done = run(leaky_graph(), text, resources=resources, backend=MockBackend(),
               allow_side_effects=True, **config)
    assert done.result.status == "completed", done.events
    assert done.of("node.delta"), "the model streamed"
    assert hidden not in everything(done)
    assert "[redacted]" in (done.result.output or "")
    assert hidden not in (done.result.output or "")
    # Nor did the approver see it.
    assert hidden not in json.dumps(resources.approvals)


def test_it_redacts_a_secret_split_across_stream_chunks() -> None:
    redactor = Redactor(["TOPSECRET"])
    stream = StreamRedactor(redactor)
    pieces = [stream.feed(c) for c in ["a TOP", "SEC", "RET b ", "Bearer x", "yz123 c"]]
    pieces.append(stream.flush())
    joined = "".join(pieces)
    assert joined == "a [redacted] b [redacted] c"
    assert all("TOP" not in p and "xyz" not in p for p in pieces)


def test_it_streams_word_by_word_one_word_behind() -> None:
    stream = StreamRedactor(Redactor())
    assert [stream.feed(w) for w in ["mock: ", "hello ", "world"]] == ["", "mock: ", "hello "]
    assert stream.flush() == "world"


def test_it_redacts_node_error_messages() -> None:
    resources = InMemoryResources(secrets=[CREDENTIAL])
    resources.fail_next("functions/f/invoke", "node_error", f"bad credential {CREDENTIAL}")
    done = run(chain(("t", "tool", {"tool": "f"})), resources=resources,
               allow_side_effects=True)
    assert done.terminal["error"]["message"] == "bad credential [redacted]"
    assert CREDENTIAL not in everything(done)


def test_it_truncates_previews_to_2000_characters() -> None:
    done = run(chain(("p", "prompt", {"template": "{input}{input}"})), "é" * 1500)
    preview = done.completed("p")["preview"]
    assert preview == "é" * 2000
    assert done.result.output == "é" * 3000  # the output itself is not a preview


def test_it_truncates_the_output_at_64_kib() -> None:
    text = "ab€" * 20_000  # 100,000 bytes of UTF-8
    done = run(chain(("p", "prompt", {"template": "{input}{input}"})), text)
    output = done.result.output or ""
    assert done.terminal["output"] == output
    assert len(output.encode("utf-8")) <= 65536
    assert len(output.encode("utf-8")) > 65536 - 4
    assert (text + text).startswith(output)


def test_it_keeps_full_redacted_model_text_on_completion() -> None:
    long = " ".join(["word"] * 1500)
    done = run(chain(("m", "model")), long)
    completed = done.completed("m")
    assert completed["text"] == "mock: " + long
    assert len(completed["preview"]) == 2000
