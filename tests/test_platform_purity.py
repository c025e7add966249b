"""runner/, contracts/, agents/ and kionga_client/ stay pure Python: no Django, DRF,
Channels or gateway apps.

The runner holds no database credentials and must be testable alone, so
importing the web stack there is a design error caught here, statically.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PURE_PACKAGES = ["runner", "contracts", "agents", "kionga_client"]
FORBIDDEN = {
    "django",
    "rest_framework",
    "channels",
    "channels_redis",
    "django_eventstream",
    "drf_spectacular",
    # Gateway apps are Django code too.
    "kionga",
    "designs",
    "runs",
    "evaluations",
    "approvals",
    "designer",
}


def imported_roots(source: str, filename: str) -> set[str]:
    """Top-level names of every absolute import in source."""
    roots: set[str] = set()
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def violations(folder: Path) -> list[str]:
    found: list[str] = []
    for file in sorted(folder.rglob("*.py")):
        bad = imported_roots(file.read_text(encoding="utf-8"), str(file)) & FORBIDDEN
        found.extend(f"{file.relative_to(folder.parent)} imports {name}" for name in sorted(bad))
    return found


@pytest.mark.parametrize("package", PURE_PACKAGES)
def test_it_keeps_the_package_free_of_django(package: str) -> None:
    assert violations(ROOT / package) == []


def test_it_notices_a_forbidden_import(tmp_path: Path) -> None:
    # Guards the guard: the check above passes trivially on an empty folder.
    pure = tmp_path / "runner"
    (pure / "engine").mkdir(parents=True)
    (pure / "ok.py").write_text("import json\nfrom . import engine\n")
    (pure / "engine" / "bad.py").write_text("def f():\n    from django.db import models\n")
    (pure / "engine" / "worse.py").write_text("import rest_framework.views, os\n")
    assert violations(pure) == [
        "runner/engine/bad.py imports django",
        "runner/engine/worse.py imports rest_framework",
    ]
