"""What every `kionga` command shares: the group that turns click's usage errors into
a USAGE envelope, the connection options (a --token value refused), the envelope around a
command's result (`common`, `finish`) and following a run to its end."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

import click

from kionga_client import envelope
from kionga_client import operations as ops
from kionga_client.errors import KiongaError
from kionga_client.gateway import Gateway, Settings
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


