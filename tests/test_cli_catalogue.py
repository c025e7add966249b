"""The agent interface's catalogue: every stable error code is documented (docs/cli-and-mcp.md
and the agent guide) with the exit code of agent-interface.md, and the CLI has every command of
its table. In-process, no gateway."""

from __future__ import annotations

import re

from click.testing import CliRunner

from kionga_client.cli import cli
from kionga_client.errors import CODES
from kionga_client.guide import agent_guide
from tests.test_platform_purity import ROOT

SPEC_EXIT = {1, 2, 3, 4, 5, 6, 7, 8, 130}
COMMANDS = ["capabilities", "agent-guide", "designs list", "designs show", "designs create",
            "designs update", "templates list", "validate", "run", "runs list", "runs show",
            "runs events", "runs cancel", "evaluate", "publish", "versions list",
            "approvals list", "agents list", "agents rollback", "agents triggers list",
            "agents triggers show", "agents triggers create-webhook",
            "agents triggers create-schedule", "agents triggers update",
            "agents triggers enable", "agents triggers disable", "agents triggers delete",
            "fixtures list", "fixtures add",
            "fixtures update", "fixtures delete", "fixtures suggest", "members invite", "mcp"]


def test_every_code_is_documented_with_its_exit_code() -> None:
    catalogue = (ROOT / "docs" / "cli-and-mcp.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `([A-Z_]+)` \| (\d+) \|", catalogue, re.MULTILINE))
    assert {code: int(exit) for code, exit in rows.items()} == {
        code: exit for code, (exit, _, _) in CODES.items()}
    assert {exit for exit, _, _ in CODES.values()} == SPEC_EXIT
    guide = agent_guide()
    for code, (exit, _, _) in CODES.items():
        if code not in ("INTERRUPTED", "GATEWAY_ERROR", "SERVICE_UNAVAILABLE"):
            assert code in guide or exit in (6, 7), code
    assert all(f"| {exit} |" in guide for exit in SPEC_EXIT)


def test_it_has_every_command_of_the_design() -> None:
    for command in COMMANDS:
        result = CliRunner().invoke(cli, [*command.split(), "--help"])
        assert result.exit_code == 0, (command, result.output)
        if command != "mcp":
            assert "--json" in result.output, command
