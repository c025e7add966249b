"""What `kionga publish` makes of the gateway's answer (in-process, no gateway): whether a
version was created comes from the answer's `created`, or from its status for a gateway
that does not send it (201 created, 200 the existing one); for people, a created version
is "Published version N (sha…)", and otherwise the gateway's `message` comes first and
nothing claims a publish."""

from __future__ import annotations

from typing import Any

import pytest

from kionga_client.human import Out, show_publish
from kionga_client.releases import publish_created

SHA = "0123456789abcdef" * 4
DESIGN = "6f1d3c3e-8c5e-4a55-9a38-111111111111"


def answer(**fields: Any) -> dict[str, Any]:
    return {"version_id": "v", "id": "v", "design_id": DESIGN, "number": 3,
            "content_sha256": SHA, "source_revision": 5, **fields}


def test_created_comes_from_the_answer_else_from_the_status() -> None:
    assert publish_created(201, answer()) is True
    assert publish_created(200, answer()) is False
    assert publish_created(200, answer(created=True)) is True  # the answer's word wins
    assert publish_created(201, answer(created=False)) is False


def test_a_new_version_is_announced(capsys: pytest.CaptureFixture[str]) -> None:
    show_publish(Out(as_json=False), answer(created=True))
    assert capsys.readouterr().out.splitlines() == [
        f"Published version 3 (sha256 {SHA[:12]}…) of design {DESIGN}, from revision 5.",
        f"Run it: kionga run {DESIGN} --version 3"]


def test_nothing_published_says_the_gateways_message_first(
        capsys: pytest.CaptureFixture[str]) -> None:
    message = "Nothing new to publish: revision 6 behaves as version 3."
    show_publish(Out(as_json=False), answer(created=False, message=message))
    said = capsys.readouterr().out
    assert said.splitlines()[0] == message
    assert "Published" not in said and "published version" not in said.lower()


def test_nothing_published_without_a_message_says_so(
        capsys: pytest.CaptureFixture[str]) -> None:
    show_publish(Out(as_json=False), answer(created=False))
    said = capsys.readouterr().out
    assert said.splitlines()[0] == (f"Nothing was published: this behaviour (sha256 "
                                    f"{SHA[:12]}…) is already version 3, published from "
                                    "revision 5.")
    assert "Published" not in said
