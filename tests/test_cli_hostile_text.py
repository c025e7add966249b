"""Whatever text a gateway sends (names, messages, run outputs, streamed model text),
`kionga` for people prints no escape sequence, no C0/C1 control but newline and tab and
no bidi control, and shows rich markup as written; `--json` keeps the exact text.

In-process, against a hostile gateway on loopback: a real gateway refuses some of these
texts (a NUL), so only a peer playing a hostile one can send every text."""

from __future__ import annotations

import json
import re
import unicodedata
import uuid
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kionga_client.cli import cli
from kionga_client.terminal import BIDI_CONTROLS, terminal_safe
from tests.loopback import QuietHandler, serving

DESIGN, RUN, FAILED_RUN = (str(uuid.uuid4()) for _ in range(3))
AT = "2025-01-02T03:04:05+00:00"
MARKUP = ["[red]", "[/]", "[bold red]x[/bold red]", "[link=https://evil.example]y[/link]",
          ":smile:", ":thumbs_up:"]
FRAGMENTS = [
    "\x1b[31m", "\x1b[2J", "\x1b[1;1H", "\x1b]8;;https://evil.example/\x07", "\x1b]8;;\x1b\\",
    "\x1b]0;pwned\x07", "\x1bP+q544e\x1b\\", "\x1b(0", "\x1bc", "\x9b6n", "\x9d2;t\x9c",
    "\x90q\x9c", "\u202e", "\u202d", "\u2066", "\u2069", "\u200f", "\u061c", "\x00", "\x07",
    "\x08", "\r", "\x0b", "\x0c", "\x7f", "\x85", "\x9b", "\x1b", "\t", "\n", "\ud800",
    *MARKUP]
HOSTILE = st.lists(st.one_of(st.sampled_from(FRAGMENTS),
                             st.text(st.characters(exclude_categories=()), max_size=8)),
                   min_size=1, max_size=8).map("".join).filter(bool)
NASTY = "".join(FRAGMENTS) + " end"


class Gateway(QuietHandler):
    """A gateway whose every text is `text` (the one of the current example)."""

    text = ""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        url = urlsplit(self.path)
        if self.headers.get("Accept") == "text/event-stream":
            self.stream()
            return
        answer = self.routes(parse_qs(url.query)).get(url.path)
        if answer is None:
            self.answer(404, {"error": {"code": "not_found", "message": self.text}})
        else:
            self.answer(*answer)

    def do_POST(self) -> None:  # noqa: N802
        self.read_body()
        if self.path == f"/api/v1/agent-designs/{DESIGN}/validate":
            self.answer(200, {"runnable": False, "content_sha256": None, "issues": [
                {"severity": "error", "code": "bad", "message": self.text, "node_id": "n"}]})
        else:
            self.answer(404, {"error": {"code": "not_found", "message": self.text}})

    def routes(self, query: dict[str, list[str]]) -> dict[str, tuple[int, Any]]:
        t, base = self.text, "/api/v1/agent-designs"
        first_page = query.get("after") == ["-1"]
        return {
            base: (200, {"designs": [{"id": DESIGN, "name": t, "revision": 1,
                                      "project_id": 1, "updated_at": AT}]}),
            f"{base}/templates": (200, {"templates": [
                {"id": "t", "name": t, "description": t, "graph": {}}]}),
            f"{base}/components": (200, {"components": []}),
            f"{base}/{DESIGN}": (200, {"id": DESIGN, "name": t, "description": t,
                                       "revision": 1, "graph": {"nodes": [], "edges": []},
                                       "validation": {"runnable": True, "issues": []}}),
            f"{base}/{DESIGN}/runs": (200, {"runs": []}),
            f"{base}/{DESIGN}/runs/{RUN}": (200, run(RUN, "completed", output=t,
                                                     events=events(t))),
            f"{base}/{DESIGN}/runs/{FAILED_RUN}": (200, run(FAILED_RUN, "failed", error={
                "code": "node_error", "message": t, "node_id": "n"})),
            f"{base}/{DESIGN}/runs/{RUN}/events": (200, {
                "events": events(t) if first_page else [], "next_after": 2,
                "complete": True}),
            f"{base}/{DESIGN}/versions": (400, {"error": {"code": "invalid_request",
                                                          "message": t}}),
            "/api/v1/agent-approvals": (200, {"next_before": None, "approvals": [
                {"id": RUN, "run_id": RUN, "design_name": t, "node_id": "n", "message": t,
                 "expires_at": AT}]}),
        }

    def stream(self) -> None:
        frames = [(0, {"seq": 0, "type": "run.started"}),
                  (None, {"type": "node.delta", "node_id": "n", "delta": self.text}),
                  *((e["seq"], e) for e in events(self.text)[1:])]
        body = "".join((f"id: {seq}\n" if seq is not None else "") + f"data: {json.dumps(e)}\n\n"
                       for seq, e in frames)
        self.answer(200, body.encode(), "text/event-stream")


def events(text: str) -> list[dict[str, Any]]:
    return [{"seq": 0, "type": "run.started", "at": AT},
            {"seq": 1, "type": "node.completed", "node_id": "n", "at": AT, "preview": text},
            {"seq": 2, "type": "run.completed", "at": AT}]


def run(run_id: str, status: str, **fields: Any) -> dict[str, Any]:
    return {"id": run_id, "design_id": DESIGN, "status": status, "output": None,
            "started_at": AT, "finished_at": AT, "events": events(""), **fields}


# A command, its exit code, where its --json has the text, and whether people see the
# text whole (tables cut and fold long cells).
Command = tuple[list[str], int, Callable[[dict[str, Any]], Any], bool]
COMMANDS: list[Command] = [
    (["designs", "list"], 0, lambda e: e["data"]["designs"][0]["name"], False),
    (["designs", "show", DESIGN], 0, lambda e: e["data"]["name"], False),
    (["templates", "list"], 0, lambda e: e["data"]["templates"][0]["description"], False),
    (["runs", "show", RUN, "--design", DESIGN], 0, lambda e: e["data"]["output"], True),
    (["runs", "show", FAILED_RUN, "--design", DESIGN], 1,
     lambda e: e["error"]["message"], True),
    (["runs", "events", RUN, "--design", DESIGN], 0,
     lambda e: e["data"]["events"][1]["preview"], False),
    (["runs", "events", RUN, "--design", DESIGN, "--follow"], 0,
     lambda e: e["data"]["events"][1]["preview"], True),
    (["validate", DESIGN], 4, lambda e: e["data"]["issues"][0]["message"], True),
    (["versions", "list", DESIGN], 2, lambda e: e["error"]["message"], True),
    (["approvals", "list"], 0, lambda e: e["data"]["approvals"][0]["message"], False),
]
KEPT = {"\n", "\t"}


def forbidden(output: str) -> list[str]:
    """The characters of `output` a terminal would obey rather than show."""
    return sorted({c for c in output if (unicodedata.category(c) == "Cc" and c not in KEPT)
                   or c in BIDI_CONTROLS or unicodedata.category(c) == "Cs"})


def squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.fixture(scope="module")
def gateway_url() -> Iterator[str]:
    with serving(Gateway) as url:
        yield url


def kionga(url: str, args: list[str]) -> Any:
    # No colours forced from the environment: any escape in the output came from the text.
    env = {"KIONGA_URL": url, "KIONGA_TOKEN": "kio_test", "COLUMNS": "200",
           "FORCE_COLOR": None, "TTY_COMPATIBLE": None, "TTY_INTERACTIVE": None}
    return CliRunner().invoke(cli, args, env=env)


def check(url: str, text: str, command: Command) -> None:
    args, code, pick, whole = command
    Gateway.text = text
    people = kionga(url, args)
    assert people.exit_code == code, (args, people.output, people.exception)
    said = people.stdout + people.stderr
    assert forbidden(said) == [], (args, said)
    if whole:  # the text as written (markup too), less what a terminal would obey
        assert squeezed(terminal_safe(text)) in squeezed(said), (args, said)
        # Markup as it stands once sequences are out: in "\x9b[red]" the "\x9b[" is a
        # whole control sequence (CSI ending in "["), so "red]" is what is left to show.
        assert all(m in said for m in MARKUP if m in terminal_safe(text)), (args, said)
    machine = kionga(url, [*args, "--json"])
    assert machine.exit_code == code, (args, machine.output)
    assert pick(json.loads(machine.stdout)) == text, args  # exact


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[0][:2]))
def test_every_command_with_every_kind_of_sequence(gateway_url: str, command: Command) -> None:
    check(gateway_url, NASTY, command)


@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=HOSTILE, command=st.sampled_from(COMMANDS))
@example(text="\x9b[red]", command=next(c for c in COMMANDS if c[0][:2] == ["runs", "show"]))
def test_people_never_get_what_a_terminal_obeys(gateway_url: str, text: str,
                                                 command: Command) -> None:
    check(gateway_url, text, command)


def test_sequences_go_whole_and_markup_stays(gateway_url: str) -> None:
    text = ("\x1b]8;;https://evil.example/\x07click\x1b]8;;\x07 \x1b[31mred\x1b[0m "
            "\u202eevil\u202c [bold]bold[/bold] :smile:")
    Gateway.text = text
    said = kionga(gateway_url, ["runs", "show", RUN, "--design", DESIGN]).stdout
    assert said.splitlines()[1] == "click red evil [bold]bold[/bold] :smile:"
