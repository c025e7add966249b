"""A design's test cases (its fixtures): list, add (or save a run as one), update,
delete, suggest. Like `operations`, each returns a `Result` or raises `KiongaError`;
the CLI's `kionga fixtures ...` and the MCP `fixtures_*` tools call these.

A case is the gateway's JSON object (`id`, `name`, `input`, `history`, `tags`,
`expected: {calls, judge}`, `approvals`), sent and answered as is."""

from __future__ import annotations

from typing import Any

from kionga_client.errors import KiongaError
from kionga_client.gateway import Gateway
from kionga_client.operations import Result


def _fixtures(design_id: str) -> str:
    return f"/agent-designs/{design_id}/fixtures"


def fixtures_list(gw: Gateway, design_id: str) -> Result:
    found = gw.request("GET", _fixtures(design_id), not_found="DESIGN_NOT_FOUND")
    return Result({"design_id": design_id, "revision": found["revision"],
                   "cases": found["cases"]})


def fixtures_add(gw: Gateway, design_id: str, case: dict[str, Any]) -> Result:
    """Add one case; with `from_run` (and `expect_output`), the run's input (and output
    as the expected answer)."""
    added = gw.request("POST", _fixtures(design_id) + "/cases", json=case,
                       not_found="NOT_FOUND")
    return Result({**added, "case_id": added["case"]["id"]})


def fixtures_update(gw: Gateway, design_id: str, case_id: str,
                    changes: dict[str, Any]) -> Result:
    """Replace the case `case_id` by itself with `changes` applied: the keys given
    replace the stored ones, and within `expected` its keys given (`calls`, `judge`)."""
    current = _case(gw, design_id, case_id)
    body = {k: v for k, v in {**current, **changes}.items() if k != "id"}
    if isinstance(changes.get("expected"), dict) and isinstance(current.get("expected"), dict):
        body["expected"] = {**current["expected"], **changes["expected"]}
    updated = gw.request("PUT", f"{_fixtures(design_id)}/cases/{case_id}", json=body,
                         not_found="NOT_FOUND")
    return Result({**updated, "case_id": case_id})


def fixtures_delete(gw: Gateway, design_id: str, case_id: str) -> Result:
    deleted = gw.request("DELETE", f"{_fixtures(design_id)}/cases/{case_id}",
                         not_found="NOT_FOUND")
    return Result({**deleted, "case_id": case_id})


def fixtures_suggest(gw: Gateway, design_id: str, *, save: bool = False) -> Result:
    """Cases proposed from the graph's paths; with `save`, those whose name is free are
    added."""
    body: dict[str, Any] = {"save": save}
    if save:
        body["revision"] = fixtures_list(gw, design_id).data["revision"]
    found = gw.request("POST", _fixtures(design_id) + "/suggest", json=body,
                       not_found="DESIGN_NOT_FOUND")
    return Result({"design_id": design_id, **found})


def _case(gw: Gateway, design_id: str, case_id: str) -> dict[str, Any]:
    for case in fixtures_list(gw, design_id).data["cases"]:
        if case.get("id") == case_id:
            return dict(case)
    raise KiongaError("NOT_FOUND", f"Design {design_id} has no test case {case_id!r}.",
                      hint=f"List its cases: kionga fixtures list {design_id}")


def case_of(path: str | None, *, name: str | None = None, text: str | None = None,
            tags: tuple[str, ...] = (), calls: tuple[str, ...] = (),
            from_run: str | None = None, expect_output: bool = False) -> dict[str, Any]:
    """The case a command line describes: a JSON file's object (- for stdin), with the
    options given over it."""
    case: dict[str, Any] = {}
    if path is not None:
        import json
        from pathlib import Path
        try:
            case = json.loads(Path(path).read_text(encoding="utf-8") if path != "-"
                              else _stdin())
        except OSError as exc:
            raise KiongaError("USAGE", f"Cannot read {path}: {exc.strerror}.") from exc
        except ValueError as exc:
            raise KiongaError("USAGE", f"{path} is not JSON: {exc}.") from exc
        if not isinstance(case, dict):
            raise KiongaError("USAGE", f"{path} does not hold a JSON object (one case).")
    given = {"name": name, "input": text, "from_run": from_run,
             "tags": list(tags) or None,
             "expected": {**(case.get("expected") or {}), "calls": list(calls)}
             if calls else None,
             "expect_output": True if expect_output else None}
    return {**case, **{k: v for k, v in given.items() if v is not None}}


def _stdin() -> str:
    import sys
    return sys.stdin.read()
