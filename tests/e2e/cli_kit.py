"""Running `kionga` in-process (click's CliRunner) against the live stack, and checking
each `--json` answer against contracts/schemas/cli-envelope.v1.schema.json (or, for
people, reading what it prints)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from contracts.schemas import schema_errors
from kionga_client.cli import cli
from tests.stack import Stack


class Kionga:
    """`kionga ... --json` as one user of the stack; every answer is schema-checked."""

    def __init__(self, stack: Stack, token: str, url: str | None = None) -> None:
        self.env = {"KIONGA_URL": url or stack.base_url, "KIONGA_TOKEN": token}
        self.commands: set[str] = set()
        self.stderr = ""  # the last command's (progress and log lines)

    def __call__(self, *args: str, code: int = 0) -> dict[str, Any]:
        result = CliRunner().invoke(cli, [*args, "--json"], env=self.env)
        self.stderr = result.stderr
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            result.exception)
        lines = result.stdout.splitlines()
        assert len(lines) == 1, result.stdout  # exactly one JSON document on stdout
        answer: dict[str, Any] = json.loads(lines[0])
        assert schema_errors("cli-envelope.v1", answer) == [], (answer, result.stderr)
        assert (answer["exit_code"], result.exit_code) == (code, code), (answer, result.stderr)
        assert answer["ok"] is (code == 0)
        self.commands.add(answer["command"])
        return answer

    def human(self, *args: str, code: int = 0) -> tuple[str, str]:
        """`kionga ...` for people (no --json) on an 80-column output: (stdout, stderr)."""
        result = CliRunner().invoke(cli, list(args), env={**self.env, "COLUMNS": "80"})
        self.stderr = result.stderr
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            result.exception)
        assert result.exit_code == code, (result.stdout, result.stderr)
        return result.stdout, result.stderr


def graph_file(tmp_path: Path, graph: dict[str, Any], name: str = "graph.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(graph))
    return str(path)


def assistant_graph() -> dict[str, Any]:
    return {"schema_version": 2, "nodes": [
        {"id": "input", "kind": "input"}, {"id": "model", "kind": "model",
                                           "config": {"model": "llm"}},
        {"id": "output", "kind": "output"}],
        "edges": [{"from": "input", "to": "model"}, {"from": "model", "to": "output"}]}
