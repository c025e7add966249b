"""`kionga` takes its API token from KIONGA_TOKEN or from a file only its owner can read
(`--token-file`, KIONGA_TOKEN_FILE), never as an argument's value (which `ps` shows): a
token file open to group or others is refused saying how to fix it, and `--token VALUE`
is refused naming the ways that work."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from kionga_client.cli import cli
from tests.conftest import Api
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def kionga(stack: Stack, *args: str, **env: str | None) -> Result:
    return CliRunner().invoke(cli, list(args), env={
        "KIONGA_URL": stack.base_url, "KIONGA_TOKEN": None, "KIONGA_TOKEN_FILE": None, **env})


def envelope(result: Result) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(result.stdout)
    assert answer["exit_code"] == result.exit_code, (answer, result.stderr)
    return answer


def token_file(tmp_path: Path, token: str, mode: int) -> str:
    path = tmp_path / f"token-{mode:o}"
    path.write_text(token + "\n")
    path.chmod(mode)
    return str(path)


def test_the_token_comes_from_the_environment(stack: Stack, api: Api, alice: Any) -> None:
    answer = envelope(kionga(stack, "designs", "list", "--json",
                             KIONGA_TOKEN=api.token_for(alice)))
    assert answer["ok"] is True and answer["data"]["designs"] == []
    refused = envelope(kionga(stack, "designs", "list", "--json", KIONGA_TOKEN="kio_wrong"))
    assert refused["error"]["code"] == "AUTH_REFUSED"  # the token reached the gateway


def test_a_private_token_file_is_used(stack: Stack, api: Api, alice: Any,
                                      tmp_path: Path) -> None:
    path = token_file(tmp_path, api.token_for(alice), 0o600)
    by_flag = envelope(kionga(stack, "designs", "list", "--json", "--token-file", path))
    by_env = envelope(kionga(stack, "designs", "list", "--json", KIONGA_TOKEN_FILE=path))
    assert by_flag["ok"] is True and by_env["ok"] is True
    # The file wins over KIONGA_TOKEN: it was named on purpose.
    wrong = envelope(kionga(stack, "designs", "list", "--json", "--token-file", path,
                            KIONGA_TOKEN="kio_wrong"))
    assert wrong["ok"] is True


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620])
def test_a_token_file_open_to_others_is_refused(stack: Stack, api: Api, alice: Any,
                                                tmp_path: Path, mode: int) -> None:
    path = token_file(tmp_path, api.token_for(alice), mode)
    answer = envelope(kionga(stack, "designs", "list", "--json", "--token-file", path))
    assert answer["exit_code"] == 2 and answer["error"]["code"] == "USAGE"
    assert answer["error"]["message"] == (
        f"The token file {path} is open to others (mode 0{mode:o}); a token must be "
        "readable by you alone.")
    assert answer["error"]["hint"] == f"Run: chmod 600 {path}"
    people = kionga(stack, "designs", "list", "--token-file", path)
    assert people.exit_code == 2 and f"chmod 600 {path}" in people.stderr
    served = kionga(stack, "mcp", "--token-file", path)  # refused before serving
    assert served.exit_code == 2 and "open to others" in served.stderr


def test_a_missing_or_empty_token_file_says_so(stack: Stack, tmp_path: Path) -> None:
    missing = envelope(kionga(stack, "designs", "list", "--json", "--token-file",
                              str(tmp_path / "nope")))
    assert missing["error"]["message"] == (f"Cannot read the token file {tmp_path / 'nope'}: "
                                           "No such file or directory.")
    empty = token_file(tmp_path, "  ", 0o600)
    answer = envelope(kionga(stack, "designs", "list", "--json", "--token-file", empty))
    assert answer["error"]["message"] == f"The token file {empty} is empty."


def test_a_token_on_the_command_line_is_refused(stack: Stack, api: Api, alice: Any) -> None:
    token = api.token_for(alice)
    answer = envelope(kionga(stack, "designs", "list", "--json", "--token", token))
    assert answer["exit_code"] == 2 and answer["error"]["code"] == "USAGE"
    assert "shows in `ps`" in answer["error"]["message"]
    assert "KIONGA_TOKEN" in answer["error"]["message"] and "--token-file" in answer[
        "error"]["message"]
    assert answer["data"] is None  # nothing was asked of the gateway
    served = kionga(stack, "mcp", "--token", token)
    assert served.exit_code == 2 and "--token-file" in served.stderr
    helped = kionga(stack, "designs", "list", "--help")
    assert "--token-file" in helped.stdout and "--token " not in helped.stdout
