"""`kionga`: the command line of the agent interface. It only parses arguments (an ID
argument may be a unique prefix: `ids`) and prints (`human`, or the envelope); every
operation is in `kionga_client.operations` and `kionga_client.releases`.

`--json` prints exactly one `kionga/1` envelope on stdout; progress and logs go to stderr.
It never asks for input without a terminal."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import click

from kionga_client import canary, envelope, ids, releases
from kionga_client import fixtures as cases
from kionga_client import operations as ops
from kionga_client.errors import KiongaError
from kionga_client.gateway import Gateway, Settings
from kionga_client.guide import agent_guide
from kionga_client.human import Out, Progress, show, show_error, show_warnings, stream_dropped

Handler = Callable[..., ops.Result]


class KiongaGroup(click.Group):
    """Turns click's own usage errors into a USAGE envelope (with --json) and exit 2."""

    def main(self, args: Any = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> NoReturn:
        argv = list(sys.argv[1:] if args is None else args)
        out = Out("--json" in argv)
        try:
            code = super().main(argv, prog_name or "kionga", complete_var,
                                standalone_mode=False, **extra)
        except click.exceptions.Abort:  # Ctrl+C outside a followed run
            if out.as_json:
                command = next((a for a in argv if not a.startswith("-")), "kionga")
                out.envelope(envelope.failure(command, KiongaError(
                    "INTERRUPTED", "Interrupted.")))
            code = 130
        except click.ClickException as exc:
            command = next((a for a in argv if not a.startswith("-")), "kionga")
            if out.as_json:
                out.envelope(envelope.failure(command, KiongaError(
                    "USAGE", exc.format_message())))
            else:
                out.usage_error(exc)
            code = 2
        sys.exit(code if isinstance(code, int) else 0)


TOKEN_ARGUMENT_REFUSED = (
    "--token is not taken: a token on the command line shows in `ps` and in shell "
    "history. Set KIONGA_TOKEN, or give --token-file PATH (or KIONGA_TOKEN_FILE): a file "
    "only you can read (chmod 600).")


def refuse_token_argument(ctx: click.Context, param: click.Parameter,
                          value: str | None) -> None:
    if value is not None:
        raise click.UsageError(TOKEN_ARGUMENT_REFUSED, ctx)


def connection_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--url and --token-file; a --token VALUE is refused (see TOKEN_ARGUMENT_REFUSED)."""
    for option in (
        click.option("--url", envvar="KIONGA_URL", help="Gateway URL (KIONGA_URL)."),
        click.option("--token-file", help="A file holding the API token, readable by you "
                     "alone (KIONGA_TOKEN_FILE); without it, KIONGA_TOKEN."),
        click.option("--token", hidden=True, expose_value=False, is_eager=True,
                     callback=refuse_token_argument),
    ):
        command = option(command)
    return command


def common(command_name: str) -> Callable[[Handler], Callable[..., NoReturn]]:
    """The options every command has, and the envelope around its result."""

    def decorate(fn: Handler) -> Callable[..., NoReturn]:
        def command(ctx: click.Context, as_json: bool, url: str | None,
                    token_file: str | None, **kwargs: Any) -> NoReturn:
            out = Out(as_json)
            try:
                gw = Gateway(Settings.from_env(url, token_file))
            except KiongaError as error:
                finish(ctx, out, command_name, error=error)
            try:
                result = fn(gw=gw, out=out, **kwargs)
            except KiongaError as error:
                finish(ctx, out, command_name, error=error)
            finally:
                gw.close()
            finish(ctx, out, command_name, result=result)

        command.__name__, command.__doc__ = fn.__name__, fn.__doc__
        decorated: Callable[..., NoReturn] = connection_options(click.option(
            "--json", "as_json", is_flag=True,
            help="Print one kionga/1 JSON envelope on stdout.")(click.pass_context(command)))
        return decorated

    return decorate


def finish(ctx: click.Context, out: Out, command: str, *, result: ops.Result | None = None,
           error: KiongaError | None = None) -> NoReturn:
    if out.as_json:
        out.envelope(envelope.failure(command, error) if error is not None
                     else envelope.success(command, result or ops.Result(None)))
    elif error is not None:
        show_error(out, error)
    else:
        assert result is not None
        show_warnings(out, result.warnings)
        show(out, command, result.data)
    ctx.exit(error.exit_code if error is not None else 0)


def follow_run(ctx: click.Context, gw: Gateway, out: Out, command: str, design_id: str,
               run_id: str, events: Iterator[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Follow a run to its end (its `events` when the start already streams them); Ctrl+C
    ends the command with 130 and a hint, not the run."""
    progress = Progress(out, gw.approver_page)
    try:
        if events is None:
            events = ops.follow(gw, design_id, run_id, on_reconnect=stream_dropped(out))
        for event in events:
            progress(event)
        return ops.wait_stored(gw, design_id, run_id)
    except KeyboardInterrupt:
        hint = (f"The run goes on. Follow it: kionga runs events {run_id} --design {design_id} "
                f"--follow; stop it: kionga runs cancel {run_id} --design {design_id}")
        finish(ctx, out, command, error=KiongaError(
            "INTERRUPTED", f"Interrupted while following run {run_id}.", hint=hint,
            data={"run_id": run_id, "design_id": design_id}))


# --- commands --------------------------------------------------------------------------------

@click.group(cls=KiongaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kionga-agent-designer", prog_name="kionga")
def cli() -> None:
    """Kionga from scripts, CI and AI agents. Add --json for one kionga/1 envelope."""


@cli.command()
@common("capabilities")
def capabilities(gw: Gateway, out: Out) -> ops.Result:
    """Version, component registry, conversions, condition operators, features."""
    result = ops.capabilities(gw)
    result.data["projects"] = gw.request("GET", "/me")["projects"]
    return result


@cli.command("agent-guide")
@common("agent-guide")
def agent_guide_command(gw: Gateway, out: Out) -> ops.Result:
    """A short guide for AI agents: what to call, in what order, errors and retries."""
    return ops.Result({"guide": agent_guide()})


@cli.group()
def designs() -> None:
    """Designs: list, show, create, update."""


@designs.command("list")
@click.option("--project", type=int, help="Only this project's designs.")
@common("designs list")
def designs_list(gw: Gateway, out: Out, project: int | None) -> ops.Result:
    """The designs of your projects."""
    return ops.designs_list(gw, project)


@designs.command("show")
@click.argument("design_id")
@common("designs show")
def designs_show(gw: Gateway, out: Out, design_id: str) -> ops.Result:
    """One design (its ID or a unique prefix): graph, steps, side effects, last run."""
    return ops.design_show(gw, ids.design(gw, design_id))


require_evaluation_option = click.option(
    "--require-evaluation/--no-require-evaluation", "require_evaluation", default=None,
    help="Whether publishing needs a passing evaluation (unchanged when left out).")


@designs.command("create")
@click.option("--template", help="A starter template's id (kionga templates list).")
@click.option("--file", "path", help="A graph JSON file (- for stdin).")
@click.option("--name")
@click.option("--project", type=int, help="Project id (default: your only project).")
@require_evaluation_option
@common("designs create")
def designs_create(gw: Gateway, out: Out, template: str | None, path: str | None,
                   name: str | None, project: int | None,
                   require_evaluation: bool | None) -> ops.Result:
    """Create a design from a template or a graph file."""
    if (template is None) == (path is None):
        raise KiongaError("USAGE", "Give exactly one of --template or --file.")
    graph = ops.load_graph(path) if path else None
    return ops.design_create(gw, name=name, graph=graph, template=template, project_id=project,
                             require_evaluation=require_evaluation)


@designs.command("update")
@click.argument("design_id")
@click.option("--file", "path", help="The graph JSON file (- for stdin); default: the saved "
              "graph, unchanged.")
@click.option("--revision", type=int, required=True, help="The revision you read.")
@click.option("--name")
@require_evaluation_option
@common("designs update")
def designs_update(gw: Gateway, out: Out, design_id: str, path: str | None, revision: int,
                   name: str | None, require_evaluation: bool | None) -> ops.Result:
    """Save a new revision (a stale --revision is refused: STALE_REVISION)."""
    if path is None and name is None and require_evaluation is None:
        raise KiongaError("USAGE", "Nothing to save: give --file, --name or "
                          "--require-evaluation/--no-require-evaluation.")
    return ops.design_update(gw, ids.design(gw, design_id),
                             graph=ops.load_graph(path) if path else None, revision=revision,
                             name=name, require_evaluation=require_evaluation)


@cli.group()
def templates() -> None:
    """Starter templates."""


@templates.command("list")
@common("templates list")
def templates_list(gw: Gateway, out: Out) -> ops.Result:
    """The starter templates (each runs with the mock model)."""
    return ops.templates_list(gw)


@cli.command()
@click.argument("target")
@click.option("--project", type=int, help="Check resource IDs in this project (files).")
@common("validate")
def validate(gw: Gateway, out: Out, target: str, project: int | None) -> ops.Result:
    """Validate a graph file (- for stdin) or a saved design (its ID or a unique prefix)."""
    if not Path(target).exists() and ids.looks_like_id(target):
        target = ids.design(gw, target)
    return ops.validate(gw, target, project)


@cli.command()
@click.argument("design_id")
@click.option("--input", "text", default="", help="The run's input text.")
@click.option("--version", "version", type=int, help="Run published version N instead.")
@click.option("--yes", is_flag=True, help="Confirm a run with side effects.")
@click.option("--allow-side-effects", is_flag=True, help="Let tool and api nodes act.")
@click.option("--dry-run", is_flag=True, help="Validate and list steps and side effects.")
@click.option("--detach", is_flag=True, help="Answer the run_id at once; do not follow.")
@click.option("--session", "session_id", help="Conversation session id.")
@click.option("--idempotency-key", help="Retry safely: the same key starts one run.")
@click.option("--from-run", "from_run",
              help="Re-run: repeat this run's recorded outputs (its ID or a unique prefix).")
@click.option("--from-node", "from_node",
              help="Re-run from this node: it and every node after it run again.")
@common("run")
def run(gw: Gateway, out: Out, design_id: str, text: str, version: int | None, yes: bool,
        allow_side_effects: bool, dry_run: bool, detach: bool, session_id: str | None,
        idempotency_key: str | None, from_run: str | None,
        from_node: str | None) -> ops.Result:
    """Run a design (or one of its versions) and follow it to the end; with --from-run
    and --from-node, again from that node (or resume a failed run from its failed node):
    the nodes before it repeat their recorded outputs without calling anything."""
    design_id = ids.design(gw, design_id)
    rerun = ops.check_rerun(from_run, from_node)
    if rerun is not None:
        rerun["from_run"] = ids.run(gw, rerun["from_run"], design_id)[0]
    plan = ops.run_plan(gw, design_id, version).data
    warnings = ops.side_effect_warnings(plan)
    ops.check_plan(plan)
    if dry_run:
        return ops.Result(plan, warnings)
    if plan["side_effects"]:
        what = "; ".join(e["what"] for e in plan["side_effects"])
        if version is None and not allow_side_effects:
            raise KiongaError("CONFIRMATION_REQUIRED", f"This graph has side effects ({what}); "
                              "pass --allow-side-effects --yes to run it.", data=plan)
        if not yes and not out.agrees(f"Run with side effects: {what}?"):
            raise KiongaError("CONFIRMATION_REQUIRED", f"Side effects not confirmed ({what}); "
                              "pass --yes.", data=plan)
    events = None
    if detach or plan["version_id"] is not None:
        started = ops.run_start(gw, design_id, text, plan=plan,
                                allow_side_effects=allow_side_effects,
                                session_id=session_id, idempotency_key=idempotency_key,
                                rerun=rerun)
    else:  # start and follow in one request
        started, events = ops.run_start_streaming(
            gw, design_id, text, plan=plan, allow_side_effects=allow_side_effects,
            session_id=session_id, idempotency_key=idempotency_key,
            on_reconnect=stream_dropped(out), rerun=rerun)
    out.log(f"run {started['run_id']} started")
    if detach:
        return ops.Result(started, warnings)
    ctx = click.get_current_context()
    final = follow_run(ctx, gw, out, "run", design_id, started["run_id"], events)
    ops.check_outcome(final)
    return ops.Result({k: v for k, v in final.items() if k != "events"}, warnings)


@cli.group()
def fixtures() -> None:
    """A design's test cases: list, add, update, delete, suggest."""


def case_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options that describe a case, over a --file JSON object's keys."""
    for option in reversed((
        click.option("--file", "path", help="A JSON object: the case (- for stdin)."),
        click.option("--name", help="The case's name (unique in the design)."),
        click.option("--input", "text", help="The input the case runs with."),
        click.option("--tag", "tags", multiple=True, help="A tag (repeat for more)."),
        click.option("--call", "calls", multiple=True,
                     help="A node that must complete (repeat for more)."),
    )):
        command = option(command)
    return command


@fixtures.command("list")
@click.argument("design_id")
@common("fixtures list")
def fixtures_list(gw: Gateway, out: Out, design_id: str) -> ops.Result:
    """The design's test cases and their revision."""
    return cases.fixtures_list(gw, ids.design(gw, design_id))


@fixtures.command("add")
@click.argument("design_id")
@case_options
@click.option("--from-run", "from_run", help="Take the input of this run of the design "
              "(its ID or a unique prefix).")
@click.option("--expect-output", is_flag=True,
              help="With --from-run: the run's output is the expected answer.")
@common("fixtures add")
def fixtures_add(gw: Gateway, out: Out, design_id: str, path: str | None, name: str | None,
                 text: str | None, tags: tuple[str, ...], calls: tuple[str, ...],
                 from_run: str | None, expect_output: bool) -> ops.Result:
    """Add a test case (from a file, options, or a past run: "save as test case")."""
    design_id = ids.design(gw, design_id)
    if from_run is not None:
        from_run = ids.run(gw, from_run, design_id)[0]
    return cases.fixtures_add(gw, design_id, cases.case_of(
        path, name=name, text=text, tags=tags, calls=calls, from_run=from_run,
        expect_output=expect_output))


@fixtures.command("update")
@click.argument("design_id")
@click.argument("case_id")
@case_options
@common("fixtures update")
def fixtures_update(gw: Gateway, out: Out, design_id: str, case_id: str, path: str | None,
                    name: str | None, text: str | None, tags: tuple[str, ...],
                    calls: tuple[str, ...]) -> ops.Result:
    """Change a test case: the keys of --file and the options given replace its own."""
    changes = cases.case_of(path, name=name, text=text, tags=tags, calls=calls)
    if not changes:
        raise KiongaError("USAGE", "Nothing to change: give --file or an option.")
    return cases.fixtures_update(gw, ids.design(gw, design_id), case_id, changes)


@fixtures.command("delete")
@click.argument("design_id")
@click.argument("case_id")
@common("fixtures delete")
def fixtures_delete(gw: Gateway, out: Out, design_id: str, case_id: str) -> ops.Result:
    """Delete a test case."""
    return cases.fixtures_delete(gw, ids.design(gw, design_id), case_id)


@fixtures.command("suggest")
@click.argument("design_id")
@click.option("--save", is_flag=True, help="Add the proposals whose name is free.")
@common("fixtures suggest")
def fixtures_suggest(gw: Gateway, out: Out, design_id: str, save: bool) -> ops.Result:
    """Test cases proposed from the graph's paths (one per path to an output)."""
    return cases.fixtures_suggest(gw, ids.design(gw, design_id), save=save)


@cli.group()
def runs() -> None:
    """Runs: list, show, events, cancel."""


design_option = click.option("--design", "design_id",
                             help="The run's design (found among yours when omitted).")


def run_ref(gw: Gateway, run_id: str, design_id: str | None) -> tuple[str, str | None]:
    """(the run, its design when known) of a RUN_ID and --design, each a full ID or a
    unique prefix."""
    return ids.run(gw, run_id, ids.design(gw, design_id) if design_id else None)


@runs.command("list")
@click.option("--design", "design_id", required=True,
              help="The design (its ID or a unique prefix).")
@click.option("--status", type=click.Choice(ops.RUN_STATUSES), help="Only runs in this status.")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True,
              help="At most this many, newest first.")
@common("runs list")
def runs_list(gw: Gateway, out: Out, design_id: str, status: str | None,
              limit: int) -> ops.Result:
    """A design's runs, newest first: status, start, duration and error code."""
    return ops.runs_list(gw, ids.design(gw, design_id), status=status, limit=limit)


@runs.command("show")
@click.argument("run_id")
@design_option
@common("runs show")
def runs_show(gw: Gateway, out: Out, run_id: str, design_id: str | None) -> ops.Result:
    """A run with its stored events (exit code by its outcome)."""
    return ops.run_show(gw, *run_ref(gw, run_id, design_id))


@runs.command("events")
@click.argument("run_id")
@design_option
@click.option("--follow", is_flag=True, help="Stream until the run ends (SSE).")
@click.option("--after", type=int, default=-1, help="Only events after this seq.")
@common("runs events")
def runs_events(gw: Gateway, out: Out, run_id: str, design_id: str | None, follow: bool,
                after: int) -> ops.Result:
    """The run's events; --follow streams them live and resumes after a dropped line."""
    run_id, design_id = run_ref(gw, run_id, design_id)
    if not follow:
        return ops.run_events(gw, run_id, design_id, after)
    design_id = design_id or ops.find_run_design(gw, run_id)
    ctx = click.get_current_context()
    final = follow_run(ctx, gw, out, "runs events", design_id, run_id)
    ops.check_outcome(final)
    events = [e for e in final["events"] if e["seq"] > after]
    return ops.Result({"run_id": run_id, "design_id": design_id, "events": events,
                       "complete": True})


@runs.command("cancel")
@click.argument("run_id")
@design_option
@common("runs cancel")
def runs_cancel(gw: Gateway, out: Out, run_id: str, design_id: str | None) -> ops.Result:
    """Cancel a run."""
    return ops.run_cancel(gw, *run_ref(gw, run_id, design_id))


@cli.command()
@click.argument("design_id")
@click.option("--revision", type=int, help="Default: the latest revision.")
@click.option("--gate", is_flag=True, hidden=True)  # every evaluation is one now; kept for scripts
@click.option("--allow-side-effects", is_flag=True)
@click.option("--detach", is_flag=True, help="Answer the evaluation at once.")
@common("evaluate")
def evaluate(gw: Gateway, out: Out, design_id: str, revision: int | None, gate: bool,
             allow_side_effects: bool, detach: bool) -> ops.Result:
    """Evaluate a revision against every case of the design's fixtures; a passing
    evaluation opens the quality gate: kionga publish ID --evaluation EVALUATION_ID."""
    return releases.evaluate(gw, ids.design(gw, design_id), revision=revision,
                             allow_side_effects=allow_side_effects, detach=detach)


@cli.command()
@click.argument("design_id")
@click.option("--revision", type=int, help="Default: the latest revision.")
@click.option("--notes", default="")
@click.option("--evaluation", "evaluation_id",
              help="A passing evaluation of this revision (its ID or a unique prefix).")
@common("publish")
def publish(gw: Gateway, out: Out, design_id: str, revision: int | None, notes: str,
            evaluation_id: str | None) -> ops.Result:
    """Publish a revision as an immutable version (the same behaviour: the same version)."""
    design_id = ids.design(gw, design_id)
    if evaluation_id is not None:
        evaluation_id = ids.evaluation(gw, evaluation_id, design_id)
    return releases.publish(gw, design_id, revision=revision, notes=notes,
                            evaluation_id=evaluation_id)


@cli.group()
def versions() -> None:
    """Published versions."""


@versions.command("list")
@click.argument("design_id")
@common("versions list")
def versions_list(gw: Gateway, out: Out, design_id: str) -> ops.Result:
    """A design's versions, newest first."""
    return releases.versions_list(gw, ids.design(gw, design_id))


@cli.group()
def agents() -> None:
    """Deployed agents: list, roll back, canary, triggers."""


@agents.command("list")
@click.option("--project", type=int, help="Only this project's agents.")
@common("agents list")
def agents_list(gw: Gateway, out: Out, project: int | None) -> ops.Result:
    """Deployed agents of your projects."""
    return ops.agents_list(gw, project_id=project)


@agents.command("rollback")
@click.argument("agent_id")
@common("agents rollback")
def agents_rollback(gw: Gateway, out: Out, agent_id: str) -> ops.Result:
    """Roll an agent back to the version it ran before (editors; hash-verified)."""
    return ops.agent_rollback(gw, agent_id)


@agents.group("canary")
def agents_canary() -> None:
    """A canary: a new version serving a share of an agent's turns, then promoted or
    rolled back."""


@agents_canary.command("start")
@click.argument("agent_id")
@click.option("--version", "version", required=True,
              help="The canary version: its number (of the agent's design) or its ID.")
@click.option("--percent", type=int, required=True,
              help="The share of turns it serves, 1 to 99 (sticky per session).")
@common("agents canary start")
def agents_canary_start(gw: Gateway, out: Out, agent_id: str, version: str,
                        percent: int) -> ops.Result:
    """Start (or change) a canary of an agent (editors)."""
    return canary.canary_start(gw, agent_id, version, percent)


@agents_canary.command("promote")
@click.argument("agent_id")
@common("agents canary promote")
def agents_canary_promote(gw: Gateway, out: Out, agent_id: str) -> ops.Result:
    """Make the canary the agent's version; the canary ends (editors; hash-verified)."""
    return canary.canary_promote(gw, agent_id)


@agents_canary.command("rollback")
@click.argument("agent_id")
@common("agents canary rollback")
def agents_canary_rollback(gw: Gateway, out: Out, agent_id: str) -> ops.Result:
    """End the canary; the agent keeps its version (editors)."""
    return canary.canary_rollback(gw, agent_id)


@agents_canary.command("status")
@click.argument("agent_id")
@click.option("--hours", type=click.IntRange(1, 168), default=24, show_default=True)
@common("agents canary status")
def agents_canary_status(gw: Gateway, out: Out, agent_id: str, hours: int) -> ops.Result:
    """The canary and both versions' turns, errors, latency, tokens and cost."""
    return canary.canary_status(gw, agent_id, hours)
@agents.group("triggers")
def agent_triggers() -> None:
    """An agent's webhooks and schedules: list, show, create, update, enable, disable,
    delete (editors change them)."""


@agent_triggers.command("list")
@click.argument("agent_id")
@common("agents triggers list")
def triggers_list(gw: Gateway, out: Out, agent_id: str) -> ops.Result:
    """The agent's triggers."""
    return ops.triggers_list(gw, agent_id)


@agent_triggers.command("show")
@click.argument("agent_id")
@click.argument("trigger_id")
@common("agents triggers show")
def triggers_show(gw: Gateway, out: Out, agent_id: str, trigger_id: str) -> ops.Result:
    """One trigger with the turns it started lately."""
    return ops.trigger_show(gw, agent_id, trigger_id)


@agent_triggers.command("create-webhook")
@click.argument("agent_id")
@click.option("--name", required=True)
@common("agents triggers create-webhook")
def triggers_create_webhook(gw: Gateway, out: Out, agent_id: str, name: str) -> ops.Result:
    """A signed webhook; its secret is printed this once (keep it where the sender reads
    it)."""
    return ops.trigger_create(gw, agent_id, {"kind": "webhook", "name": name})


@agent_triggers.command("create-schedule")
@click.argument("agent_id")
@click.option("--name", required=True)
@click.option("--cron", required=True, help="minute hour day-of-month month day-of-week, "
              "e.g. '0 9 * * mon-fri'.")
@click.option("--timezone", default="UTC", show_default=True, help="An IANA time zone.")
@click.option("--input", "text", default="", help="The input of each turn.")
@common("agents triggers create-schedule")
def triggers_create_schedule(gw: Gateway, out: Out, agent_id: str, name: str, cron: str,
                             timezone: str, text: str) -> ops.Result:
    """A schedule: a turn at each time the cron expression matches in the time zone."""
    return ops.trigger_create(gw, agent_id, {"kind": "schedule", "name": name, "cron": cron,
                                             "timezone": timezone, "input": text})


@agent_triggers.command("update")
@click.argument("agent_id")
@click.argument("trigger_id")
@click.option("--name")
@click.option("--cron")
@click.option("--timezone")
@click.option("--input", "text")
@common("agents triggers update")
def triggers_update(gw: Gateway, out: Out, agent_id: str, trigger_id: str,
                    name: str | None, cron: str | None, timezone: str | None,
                    text: str | None) -> ops.Result:
    """Change a trigger's name, or a schedule's cron, time zone or input."""
    changes = {key: value for key, value in (("name", name), ("cron", cron),
                                             ("timezone", timezone), ("input", text))
               if value is not None}
    if not changes:
        raise KiongaError("USAGE", "Nothing to change: give --name, --cron, --timezone or "
                                   "--input.")
    return ops.trigger_update(gw, agent_id, trigger_id, changes)


def _switch(enabled: bool) -> Callable[..., NoReturn]:
    verb = "enable" if enabled else "disable"

    @click.argument("agent_id")
    @click.argument("trigger_id")
    @common(f"agents triggers {verb}")
    def switch(gw: Gateway, out: Out, agent_id: str, trigger_id: str) -> ops.Result:
        return ops.trigger_update(gw, agent_id, trigger_id, {"enabled": enabled})

    switch.__doc__ = ("Start turns again from this trigger." if enabled else
                      "Stop this trigger starting turns (deliveries answer 409).")
    return switch


agent_triggers.command("enable")(_switch(True))
agent_triggers.command("disable")(_switch(False))


@agent_triggers.command("delete")
@click.argument("agent_id")
@click.argument("trigger_id")
@common("agents triggers delete")
def triggers_delete(gw: Gateway, out: Out, agent_id: str, trigger_id: str) -> ops.Result:
    """Delete a trigger (the turns it started stay)."""
    return ops.trigger_delete(gw, agent_id, trigger_id)


@cli.group()
def members() -> None:
    """Project members: invite people (project admins)."""


@members.command("invite")
@click.argument("user")
@click.option("--project", type=int, required=True, help="The project's ID.")
@click.option("--role", default="viewer", show_default=True,
              type=click.Choice(["viewer", "editor", "admin"]))
@common("members invite")
def members_invite(gw: Gateway, out: Out, user: str, project: int, role: str) -> ops.Result:
    """Invite USER (a user name or an email address) to a project; they accept where
    they sign in, or through the set-password link emailed to an address with no account."""
    return ops.member_invite(gw, project, user, role)


@cli.group()
def approvals() -> None:
    """Approval requests (agents may read, never decide)."""


@approvals.command("list")
@click.option("--status", default="pending", show_default=True,
              type=click.Choice(["pending", "approved", "rejected", "expired", "cancelled"]))
@click.option("--project", type=int)
@click.option("--run", "run_id")
@click.option("--limit", type=int)
@common("approvals list")
def approvals_list(gw: Gateway, out: Out, status: str, project: int | None,
                   run_id: str | None, limit: int | None) -> ops.Result:
    """Approval requests of your projects."""
    return ops.approvals_list(gw, status=status, project_id=project, run_id=run_id,
                              limit=limit)


@cli.command()
@connection_options
def mcp(url: str | None, token_file: str | None) -> None:
    """Serve the same operations as MCP tools over stdio."""
    from kionga_client.mcp_server import serve

    try:
        settings = Settings.from_env(url, token_file)
    except KiongaError as error:
        show_error(Out(as_json=False), error)
        sys.exit(error.exit_code)
    serve(settings)


def main() -> None:
    cli.main()


if __name__ == "__main__":
    main()
