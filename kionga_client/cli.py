"""`kionga`: the command line of the agent interface. It only parses arguments (an ID
argument may be a unique prefix: `ids`) and prints (`human`, or the envelope); every
operation is in `kionga_client.operations` and `kionga_client.releases`.

`--json` prints exactly one `kionga/1` envelope on stdout; progress and logs go to stderr.
It never asks for input without a terminal."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from kionga_client import fixtures as cases
from kionga_client import ids, plans, releases
from kionga_client import operations as ops
from kionga_client.agent_commands import agents, approvals, members
from kionga_client.command_kit import KiongaGroup, common, connection_options, follow_run
from kionga_client.errors import KiongaError
from kionga_client.gateway import Gateway, Settings
from kionga_client.guide import agent_guide
from kionga_client.human import Out, show_error, stream_dropped


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
    warnings = plans.side_effect_warnings(plan)
    plans.check_plan(plan)
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


for group in (agents, members, approvals):
    cli.add_command(group)


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
