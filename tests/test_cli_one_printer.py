"""`kionga_client.human` is the CLI's only writer, so a new command cannot print around
its safe console (`kionga_client.terminal`): no other module of the client prints,
echoes, prompts, touches stdout/stderr or uses rich."""

from __future__ import annotations

import ast

from tests.test_platform_purity import ROOT

WRITERS = {"human.py", "terminal.py"}
WRITING_CALLS = {"print", "echo", "secho", "confirm", "prompt", "print_json", "Console"}
STREAMS = {"stdout", "stderr"}


def writes(tree: ast.AST) -> list[str]:
    """Where a module writes to the terminal (or could, holding rich)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else (
                func.attr if isinstance(func, ast.Attribute) else "")
            if name in WRITING_CALLS:
                found.append(f"{name}() line {node.lineno}")
        elif isinstance(node, ast.Attribute) and node.attr in STREAMS:
            found.append(f".{node.attr} line {node.lineno}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "rich":
            found.append(f"from {node.module} line {node.lineno}")
        elif isinstance(node, ast.Import) and any(a.name.split(".")[0] == "rich"
                                                  for a in node.names):
            found.append(f"import rich line {node.lineno}")
    return found


def test_only_the_human_module_writes() -> None:
    offenders = {}
    for path in sorted((ROOT / "kionga_client").glob("*.py")):
        if path.name not in WRITERS:
            found = writes(ast.parse(path.read_text(encoding="utf-8")))
            if found:
                offenders[path.name] = found
    assert offenders == {}


def test_the_check_sees_a_writer() -> None:
    sample = "import click, sys\nclick.echo('x')\nsys.stderr.write('y')\nfrom rich import print\n"
    assert len(writes(ast.parse(sample))) == 3
