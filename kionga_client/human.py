"""What `kionga` prints for people (without `--json`): tables with full IDs, a sentence
and the next step for what a command did, errors with their hint, and a followed run
node by node on stderr."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import IO, Any, cast

import click
from rich.console import Console
from rich.prompt import Confirm
from rich.table import Table

from kionga_client import operations as ops
from kionga_client.errors import KiongaError
from kionga_client.terminal import SafeConsole

MAX_CELL = 60  # longer text cells are cut (IDs never are)
SHORT_HASH = 12  # characters of a behaviour hash people are shown
WHOLE_COLUMNS = ("content_sha256", "status", "error")  # besides IDs: hashes and codes
MIN_TEXT_WIDTH = 10  # a text column wraps down to this, never vanishes
TABLE_EDGES = 3  # per column: padding on both sides and its border


class Out:
    """Where a command prints, and the only writer of the CLI: the envelope (JSON, exact)
    or text for people, which goes through `SafeConsole` whatever it holds."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.out = SafeConsole(soft_wrap=True)
        self.err = SafeConsole(stderr=True, soft_wrap=True)

    def log(self, message: str, style: str | None = None) -> None:
        self.err.print(message, style=style)

    def say(self, message: str, style: str | None = None) -> None:
        self.out.print(message, style=style)

    def shown(self, text: str) -> str:
        """What people see of `text` (to measure or cut it as they will read it)."""
        return self.out.render_str(text).plain

    def envelope(self, body: dict[str, Any]) -> None:
        """One `kionga/1` envelope on stdout, its text exactly as the gateway sent it."""
        click.echo(_escape_lone_surrogates(json.dumps(body, ensure_ascii=False)))

    def usage_error(self, error: click.ClickException) -> None:
        """click's own message for a wrong command line, through the safe console."""
        error.show(file=cast(IO[str], _ConsoleFile(self.err)))  # click only writes

    def agrees(self, question: str) -> bool:
        """Asks only a person at a terminal; anything else is a no."""
        if self.as_json or not sys.stdin.isatty():
            return False
        return Confirm.ask(self.err.render_str(question), console=self.err, default=False)


class _ConsoleFile:
    """A text file that writes through a console (click prints its errors to files)."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def write(self, text: str) -> int:
        self.console.print(text, end="")
        return len(text)

    def flush(self) -> None:
        self.console.file.flush()


def _escape_lone_surrogates(text: str) -> str:
    # json.dumps(ensure_ascii=False) leaves a lone surrogate (JSON from a gateway may
    # hold one) raw, and UTF-8 cannot encode it; as a \uXXXX escape the document
    # parses to the very same text.
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


# --- tables ----------------------------------------------------------------------------------

def table(out: Out, rows: list[dict[str, Any]], columns: list[str], title: str) -> None:
    """Rows as a table. IDs, hashes and codes are never cut or wrapped (people copy them);
    when the terminal is too narrow for them, the table is printed wider than it. Other
    text wraps (a word too long for its column folds), never cut short by the table."""
    if not rows:
        out.say(f"No {title}.")
        return
    grid = Table(title=title, title_justify="left")
    needed = 1
    cells = [[_cell(column, out.shown(_text(column, row.get(column)))) for column in columns]
             for row in rows]
    for index, column in enumerate(columns):
        widest = max(len(column), *(len(row[index]) for row in cells))
        if _kept_whole(column):
            grid.add_column(column, no_wrap=True, min_width=widest)
        else:
            widest = min(widest, MIN_TEXT_WIDTH)
            grid.add_column(column, min_width=widest, overflow="fold")
        needed += widest + TABLE_EDGES
    for row in cells:
        grid.add_row(*row)
    with _at_least(out.out, needed):
        out.out.print(grid)


def _is_id(column: str) -> bool:
    return column == "id" or column.endswith("_id")


def _kept_whole(column: str) -> bool:
    return _is_id(column) or column in WHOLE_COLUMNS


@contextmanager
def _at_least(console: Console, width: int) -> Iterator[None]:
    before = console.width
    console.width = max(before, width)
    try:
        yield
    finally:
        console.width = before


def _text(column: str, value: Any) -> str:
    """A value as its column shows it, before it is cut to fit."""
    if value is None:
        return "-"
    if column in ("at", "started") or column.endswith("_at"):
        return _time(value)
    if column == "content_sha256":  # never an argument: short, as git shows a hash
        return str(value)[:SHORT_HASH]
    return value if isinstance(value, str) else json.dumps(value)


def _cell(column: str, shown: str) -> str:
    """The text people see in a cell: cut to MAX_CELL characters, but IDs."""
    return shown if _is_id(column) or len(shown) <= MAX_CELL else shown[:MAX_CELL - 3] + "..."


def _time(value: Any) -> str:
    """An ISO time to the second, with its offset (Z for UTC)."""
    try:
        text = datetime.fromisoformat(str(value)).isoformat(sep=" ", timespec="seconds")
    except ValueError:
        return str(value)
    return text.removesuffix("+00:00") + "Z" if text.endswith("+00:00") else text


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {rest:02d}s"
    return f"{minutes // 60}h {minutes % 60:02d}m"


LISTS: dict[str, tuple[str, list[str]]] = {
    "designs list": ("designs", ["id", "name", "revision", "project_id", "updated_at"]),
    "templates list": ("templates", ["id", "name", "description"]),
    "versions list": ("versions", ["id", "number", "content_sha256", "author", "created_at"]),
    "approvals list": ("approvals", ["id", "run_id", "design_name", "node_id", "message",
                                     "expires_at"]),
    "runs events": ("events", ["seq", "type", "node_id", "at", "preview"]),
    "agents list": ("agents", ["id", "name", "version", "project_id", "updated_at"]),
    "agents triggers list": ("triggers", ["id", "kind", "name", "enabled", "cron",
                                          "timezone"]),
    "fixtures list": ("cases", ["id", "name", "input", "tags"]),
    "fixtures suggest": ("suggestions", ["name", "input", "tags"]),
}
RUN_COLUMNS = ["id", "status", "started", "duration", "error"]


def run_row(run: dict[str, Any]) -> dict[str, Any]:
    """A run as `runs list` shows it: a run still going shows how long so far."""
    seconds = run.get("duration_seconds")
    so_far = ""
    if seconds is None and run.get("started_at") and run["status"] not in ops.FINAL_STATUSES:
        started = datetime.fromisoformat(run["started_at"])
        seconds, so_far = (datetime.now(UTC) - started).total_seconds(), " so far"
    return {"id": run["run_id"], "status": run["status"], "started": run.get("started_at"),
            "duration": duration(seconds) + so_far,
            "error": (run.get("error") or {}).get("code")}


# --- results -----------------------------------------------------------------------------------

def show(out: Out, command: str, data: Any) -> None:
    if command in LISTS:
        key, columns = LISTS[command]
        table(out, data[key], columns, key)
    elif command in SUMMARIES:
        SUMMARIES[command](out, data)
    elif command == "capabilities":
        out.say(f"kionga {data['version']} · gateway {data['gateway']} · registry "
                f"{data['registry_version']}")
        table(out, data["components"], ["kind", "label", "side_effects", "help"], "components")
        out.say("features: " + ", ".join(k for k, v in data["features"].items() if v))
    elif command == "validate":
        out.say("runnable" if data["runnable"] else "not runnable", style="green")
        show_issues(out.out, data["issues"])
    elif command in ("run", "runs show", "runs cancel") and "run_id" in data:
        out.say(f"run {data['run_id']}: {data['status']}")
        if data.get("output") is not None:
            out.say(str(data["output"]))
    elif command == "run":  # --dry-run
        out.say(f"design {data['design_id']} revision {data['revision']}: "
                f"{'runnable' if data['runnable'] else 'not runnable'}")
        table(out, data["steps"], ["node_id", "kind", "name", "side_effects"], "steps")
        for effect in data["side_effects"]:
            out.say(f"side effect: {effect['what']}", style="yellow")
    elif command == "agent-guide":
        out.say(data["guide"])
    else:
        out.out.print_json(json.dumps(data, ensure_ascii=False))


def show_runs(out: Out, data: dict[str, Any]) -> None:
    table(out, [run_row(r) for r in data["runs"]], RUN_COLUMNS,
          f"runs of design {data['design_id']}")


def show_design(verb: str) -> Callable[[Out, dict[str, Any]], None]:
    """A created or saved design: its revision, whether it can run, and its gate."""

    def summary(out: Out, data: dict[str, Any]) -> None:
        validation = data.get("validation") or {}
        issues = validation.get("issues") or []
        errors = sum(1 for i in issues if i.get("severity") == "error")
        state = "runnable" if validation.get("runnable") else f"not runnable ({errors} errors)"
        out.say(f"{verb} design {data['name']!r} ({data['id']}): revision {data['revision']},"
                f" {state}.", style="green" if validation.get("runnable") else "yellow")
        show_issues(out.out, issues)
        if data.get("require_evaluation"):
            out.say(f"Publishing it needs a passing evaluation: kionga evaluate {data['id']}, "
                    f"then kionga publish {data['id']} --evaluation EVALUATION_ID.")
    return summary


def show_evaluation(out: Out, data: dict[str, Any]) -> None:
    """A passed evaluation (or one still going, when detached) and how to publish with it."""
    eid, design, revision = data["evaluation_id"], data.get("design_id"), data.get("revision")
    counts, progress = data.get("counts") or {}, data.get("progress") or {}
    what = f"design {design}, revision {revision}"
    if data.get("status") == "completed" and data.get("passed"):
        out.say(f"Evaluation {eid} passed: {counts.get('passed')} of {counts.get('total')} "
                f"cases ({what}).", style="green")
        when = "Publish"
    else:
        out.say(f"Evaluation {eid} is {data.get('status')}: {progress.get('done')} of "
                f"{progress.get('total')} cases done ({what}).")
        when = "Once it has passed, publish"
    if data.get("gate") is False:
        out.say("It ran a chosen subset of the cases, so it cannot open the quality gate.")
        return
    out.say(f"{when} revision {revision} with it: kionga publish {design} --revision "
            f"{revision} --evaluation {eid}")


def show_publish(out: Out, data: dict[str, Any]) -> None:
    """What a publish did: a new version, or (saying so first) none, the same behaviour
    being an existing version already."""
    number, sha = data["number"], str(data["content_sha256"])[:SHORT_HASH]
    if data["created"]:
        out.say(f"Published version {number} (sha256 {sha}…) of design {data['design_id']}, "
                f"from revision {data.get('source_revision')}.", style="bold green")
    else:
        message = data.get("message") or (
            f"Nothing was published: this behaviour (sha256 {sha}…) is already version "
            f"{number}, published from revision {data.get('source_revision')}.")
        out.say(str(message), style="bold yellow")
        out.say(f"Version {number} (sha256 {sha}…) stays the one with this behaviour.")
    out.say(f"Run it: kionga run {data['design_id']} --version {number}")


def show_rollback(out: Out, data: dict[str, Any]) -> None:
    sha = data["rollouts"][0]["content_sha256"] if data.get("rollouts") else ""
    out.say(f"Agent {data['name']} rolled back to version {data['version']} "
            f"(sha256 {sha[:12]}…).")


def show_canary(out: Out, data: dict[str, Any]) -> None:
    canary = data.get("canary")
    if canary is None:
        out.say(f"Agent {data['name']} runs version {data['version']}; no canary.")
    else:
        out.say(f"Agent {data['name']} runs version {data['version']}; canary version "
                f"{canary['version']} serves {canary['percent']} % of the turns.")


def show_canary_status(out: Out, data: dict[str, Any]) -> None:
    show_canary(out, data)
    rows = [{"role": v["role"], "version": v["version"], "turns": v["requests"],
             "errors": v["errors"], "p50_ms": v["latency_ms"]["p50"],
             "p95_ms": v["latency_ms"]["p95"], "tokens": v["tokens"], "cost": v["cost"]}
            for v in data["versions"]]
    table(out, rows, ["role", "version", "turns", "errors", "p50_ms", "p95_ms", "tokens",
                      "cost"], "versions")


def show_trigger(out: Out, data: dict[str, Any]) -> None:
    state = "enabled" if data["enabled"] else "disabled"
    if data["kind"] == "schedule":
        out.say(f"Schedule {data['name']} ({data['trigger_id']}): '{data['cron']}' in "
                f"{data['timezone']}, {state}.")
    else:
        out.say(f"Webhook {data['name']} ({data['trigger_id']}): POST {data['path']}, {state}.")
    if data.get("secret"):
        out.say(f"Signing secret (shown this once): {data['secret']}", style="bold yellow")
    for firing in data.get("firings") or []:
        out.say(f"  {firing['created_at']} {firing['delivery_id']} → turn "
                f"{firing['turn_id']} {firing['status']}")


def show_invitation(out: Out, data: dict[str, Any]) -> None:
    out.say(f"Invited {data['user']} to project {data['project_id']} as {data['role']} "
            f"(invitation {data['id']}, {data['status']} until {data['expires_at']}).")
    out.say("An email is on its way when the name has an address; they accept where they "
            "sign in.")


SUMMARIES: dict[str, Callable[[Out, dict[str, Any]], None]] = {
    "runs list": show_runs,
    "designs create": show_design("Created"),
    "designs update": show_design("Saved"),
    "evaluate": show_evaluation,
    "publish": show_publish,
    "agents rollback": show_rollback,
    "agents canary start": show_canary,
    "agents canary promote": show_canary,
    "agents canary rollback": show_canary,
    "agents canary status": show_canary_status,
    "agents triggers show": show_trigger,
    "agents triggers create-webhook": show_trigger,
    "agents triggers create-schedule": show_trigger,
    "agents triggers update": show_trigger,
    "agents triggers enable": show_trigger,
    "agents triggers disable": show_trigger,
    "members invite": show_invitation,
}


# --- errors and warnings -----------------------------------------------------------------------

def show_error(out: Out, error: KiongaError) -> None:
    out.err.print(f"error {error.code}: {error.message}", style="bold red")
    out.err.print(f"hint: {error.as_dict()['hint']}", style="yellow")
    if isinstance(error.data, dict) and error.data.get("issues"):
        show_issues(out.err, error.data["issues"])
    if isinstance(error.data, dict) and isinstance(error.data.get("cases"), list):
        for case in error.data["cases"]:
            if case.get("passed") is False:
                out.err.print(f"  ✗ {case.get('name')}: {case.get('reason')}")


def show_warnings(out: Out, warnings: list[dict[str, str]]) -> None:
    for warning in warnings:
        out.err.print(f"warning {warning['code']}: {warning['message']}", style="yellow")


def show_issues(console: Console, issues: list[dict[str, Any]]) -> None:
    for issue in issues:
        where = issue.get("node_id") or issue.get("path") or ""
        console.print(f"  {issue.get('severity', '')} {issue.get('code')}"
                      f"{' @ ' + str(where) if where else ''}: {issue.get('message')}")


# --- a followed run ----------------------------------------------------------------------------

class Progress:
    """A followed run for people: node by node on stderr, model text as it streams, and
    where a person decides each approval the run waits on."""

    def __init__(self, out: Out, approver_page: Callable[[str], str]) -> None:
        self.out = out
        self.approver_page = approver_page
        self.streaming: str | None = None

    def __call__(self, event: dict[str, Any]) -> None:
        kind, node = event.get("type"), event.get("node_id")
        if kind == "node.delta":
            if self.streaming != node:
                self.out.err.print(f"  {node} ▸ ", end="")
                self.streaming = node
            self.out.err.print(event.get("delta", ""), end="")
            return
        if self.streaming is not None:
            self.out.err.print()
            self.streaming = None
        if self.out.as_json:
            self.out.log(f"{event.get('seq')} {kind} {node or ''}")
        else:
            self._show(event)
        if kind == "approval.requested" and event.get("approval_id"):
            self.out.log(f"  waiting for a person to decide: "
                         f"{self.approver_page(str(event['approval_id']))}", style="yellow")

    def _show(self, event: dict[str, Any]) -> None:
        kind, node = event.get("type"), event.get("node_id")
        if kind == "node.started":
            self.out.log(f"▶ {node} ({event.get('kind')})", style="cyan")
        elif kind == "node.completed":
            preview = str(event.get("preview", ""))[:120]
            self.out.log(f"✓ {node}  {preview}", style="green")
        elif kind == "node.failed":
            self.out.log(f"✗ {node}: {(event.get('error') or {}).get('message')}", style="red")
        elif kind in ("approval.requested", "approval.resolved", "node.retrying",
                      "node.skipped"):
            self.out.log(f"• {kind} {node or ''}", style="yellow")
        elif kind in ops.TERMINAL_EVENTS or kind == "run.started":
            self.out.log(f"{kind}", style="bold")


def stream_dropped(out: Out) -> Callable[[int | None], None]:
    """What a follower says when a run's stream dropped and it resumes."""
    return lambda seq: out.log(f"stream dropped; resuming after event {seq}")
