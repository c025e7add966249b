"""The agent runtime's request bodies (agents/http.py), whatever the server lets through:
a Content-Length that is not one non-negative number is 400, a body past the cap 413
(declared or streamed), a body that is not JSON — or nested past the parser — 400."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agents.http import MAX_BODY, HttpError, read_json


def _read(headers: list[tuple[bytes, bytes]], chunks: list[bytes]) -> Any:
    messages = [{"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
                for i, c in enumerate(chunks)]

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    return asyncio.run(read_json({"headers": headers}, receive))


@pytest.mark.parametrize("length", [b"-1", b"+2", b" ", b"0x10", b"1e3", b"\xd9\xa2"])
def test_a_malformed_length_is_400(length: bytes) -> None:
    with pytest.raises(HttpError) as refused:
        _read([(b"content-length", length)], [b"{}"])
    assert refused.value.status == 400


def test_two_different_lengths_are_400() -> None:
    with pytest.raises(HttpError) as refused:
        _read([(b"content-length", b"2"), (b"content-length", b"3")], [b"{}"])
    assert refused.value.status == 400


@pytest.mark.parametrize("length", [str(MAX_BODY + 1).encode(), b"9" * 5000])
def test_a_declared_length_past_the_cap_is_413(length: bytes) -> None:
    with pytest.raises(HttpError) as refused:
        _read([(b"content-length", length)], [b"{}"])
    assert refused.value.status == 413


def test_a_streamed_body_past_the_cap_is_413() -> None:
    with pytest.raises(HttpError) as refused:
        _read([], [b"x" * 600_000, b"x" * 600_000])
    assert refused.value.status == 413


@pytest.mark.parametrize("body", [b"{", b"\xff\xfe", b"[" * 100_000 + b"]" * 100_000])
def test_what_is_not_json_is_400(body: bytes) -> None:
    with pytest.raises(HttpError) as refused:
        _read([(b"content-length", str(len(body)).encode())], [body])
    assert (refused.value.status, refused.value.code) == (400, "invalid_json")


def test_a_json_body_within_bounds_is_read() -> None:
    assert _read([(b"content-length", b"14")], [b'{"input":', b' "x"}']) == {"input": "x"}
