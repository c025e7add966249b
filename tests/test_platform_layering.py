"""The packages form a DAG a newcomer can draw: each may import only the packages below it.

    contracts <- runner <- kionga (platform) <- designs <- deployments <- runs <- approvals
                         <-  agents (the published-version runtime; nothing imports it)
                                                  evaluations  <-  operations (above all)
                                                    runs  <-  triggers (webhooks, schedules)
                                   <-  designer (the canvas pages; the apps only via the API)
    kionga_client (the CLI and MCP server: HTTP only, contracts at most; nothing imports it)

A new arrow (the platform importing an app, runs importing approvals) fails here.
The platform's URLconfs are the one exception: they mount the apps' URL modules.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_platform_purity import ROOT, imported_roots

OURS = {"contracts", "runner", "agents", "kionga", "designs", "deployments", "runs", "approvals",
        "evaluations", "operations", "kionga_client", "designer", "triggers"}
ALLOWED: dict[str, set[str]] = {
    "contracts": set(),
    "runner": {"contracts"},
    # The runtime of published versions: the engine and the contracts, nothing else.
    "agents": {"contracts", "runner"},
    "kionga": {"contracts", "runner"},
    "designs": {"contracts", "runner", "kionga"},
    # Deployed agents: below runs, so the internal listener can know agent credentials.
    "deployments": {"contracts", "runner", "kionga", "designs"},
    "runs": {"contracts", "runner", "kionga", "designs", "deployments"},
    "approvals": {"contracts", "runner", "kionga", "designs", "deployments", "runs"},
    "evaluations": {"contracts", "runner", "kionga", "designs", "deployments", "runs",
                    "approvals"},
    # Metrics and ops pages read everything; nothing imports them.
    "operations": {"contracts", "runner", "kionga", "designs", "deployments", "runs",
                   "approvals", "evaluations"},
    # Webhooks and schedules open deployed agents' turns; nothing imports them.
    "triggers": {"contracts", "runner", "kionga", "designs", "deployments", "runs"},
    # The agent interface talks to any gateway over HTTP: never the gateway's code.
    "kionga_client": {"contracts"},
    # The canvas talks to the product from the browser, through the public API only.
    "designer": {"contracts", "runner", "kionga"},
}
URLCONFS = {"kionga/urls.py", "kionga/internal_urls.py", "kionga/api_urls.py"}


def arrows(package: str, root: Path = ROOT) -> list[str]:
    """Imports of our packages from `package` that the table does not allow."""
    found: list[str] = []
    for file in sorted((root / package).rglob("*.py")):
        relative = file.relative_to(root).as_posix()
        if "/migrations/" in relative or relative in URLCONFS:
            continue
        imported = imported_roots(file.read_text(encoding="utf-8"), str(file)) & OURS
        found += [f"{relative} imports {name}"
                  for name in sorted(imported - ALLOWED[package] - {package})]
    return found


def test_it_allows_a_dag() -> None:
    # A package may only import packages that may not import it back.
    for package, below in ALLOWED.items():
        for other in below:
            assert package not in ALLOWED[other], f"{package} <-> {other}"


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_it_keeps_each_package_to_its_allowed_imports(package: str) -> None:
    assert arrows(package) == []


def test_it_notices_an_upward_import(tmp_path: Path) -> None:
    (tmp_path / "kionga").mkdir()
    (tmp_path / "kionga" / "ok.py").write_text("from runner import protocol\n")
    (tmp_path / "kionga" / "bad.py").write_text("def f():\n    from runs.models import Run\n")
    assert arrows("kionga", tmp_path) == ["kionga/bad.py imports runs"]
