"""Fixtures (a design's test cases): `check_*` validate, `do_*` write. Views call these."""

from __future__ import annotations

import uuid
from typing import Any, Final

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from contracts.registry import COMPONENTS
from contracts.suggest import suggest_cases
from designs.models import Design
from designs.validation import revision_report
from evaluations.models import Fixtures
from evaluations.serializers import MAX_CASES
from kionga.errors import APIError
from runner.request import DEFAULT_APPROVAL_DECISION, ScriptedApprovals


def fixtures_dict(design: Design) -> dict[str, Any]:
    found = Fixtures.objects.filter(design=design).first()
    return {
        "design_id": str(design.pk),
        "revision": found.revision if found else 0,
        "cases": found.cases if found else [],
        "updated_at": found.updated_at.isoformat() if found else None,
    }


# The nodes a case's `approvals` may name: approval nodes, and the nodes that run a
# published version (its approvals resolve as the calling node's entry says).
APPROVAL_HOLDERS: Final = frozenset(
    {"approval"} | {c.kind for c in COMPONENTS.values() if c.setting("subflow") is not None})


def saved_nodes(design: Design) -> dict[str, Any]:
    """{node ID: kind} of the design's saved (latest) graph."""
    nodes = design.current().graph.get("nodes")
    if not isinstance(nodes, list):
        return {}
    return {n["id"]: n.get("kind") for n in nodes
            if isinstance(n, dict) and isinstance(n.get("id"), str)}


def saved_node_ids(design: Design) -> set[str]:
    """The node IDs of the design's saved (latest) graph: what expected.calls may name."""
    return set(saved_nodes(design))


def scripted_approvals(case: dict[str, Any]) -> ScriptedApprovals:
    """How the case's run resolves its approvals (cases stored before `approvals`
    existed approve them all)."""
    found = case.get("approvals", DEFAULT_APPROVAL_DECISION)
    if isinstance(found, dict):
        return ScriptedApprovals(DEFAULT_APPROVAL_DECISION, dict(found))
    return ScriptedApprovals(found)


def check_cases(design: Design, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The cases to store (IDs assigned where missing), or 400 invalid_request naming
    every field at fault: duplicate names or IDs, calls of nodes the graph lacks,
    approvals of nodes that are not approvals (or do not run a published version)."""
    nodes = saved_nodes(design)
    known = set(nodes)
    fields: dict[str, list[str]] = {}
    names: dict[str, int] = {}
    ids: dict[str, int] = {}
    for index, case in enumerate(cases):
        if case["name"] in names:
            fields[f"cases.{index}.name"] = [
                f"The name is already used by case {names[case['name']]}."]
        names.setdefault(case["name"], index)
        if case["id"] is not None:
            if case["id"] in ids:
                fields[f"cases.{index}.id"] = [f"The ID is already used by case {ids[case['id']]}."]
            ids.setdefault(case["id"], index)
        unknown = [c for c in case["expected"]["calls"] if c not in known]
        if unknown:
            fields[f"cases.{index}.expected.calls"] = [
                "Not nodes of the design's saved graph: " + ", ".join(unknown) + "."]
        approvals = case.get("approvals")
        wrong = [n for n in approvals if nodes.get(n) not in APPROVAL_HOLDERS] \
            if isinstance(approvals, dict) else []
        if wrong:
            fields[f"cases.{index}.approvals"] = [
                "Not approval, subflow, map or loop nodes of the design's saved graph: "
                + ", ".join(wrong) + "."]
    if fields:
        path, messages = next(iter(fields.items()))
        raise APIError(400, "invalid_request", f"{path}: {messages[0]}", {"fields": fields})
    return [_stored(case, ids) for case in cases]


def _stored(case: dict[str, Any], used: dict[str, int]) -> dict[str, Any]:
    case_id = case["id"]
    while case_id is None or case_id in used and case["id"] is None:
        case_id = f"case-{uuid.uuid4().hex[:12]}"  # stable from now on: clients send it back
    used[case_id] = -1
    judge = case["expected"].get("judge")
    expected: dict[str, Any] = {"calls": list(case["expected"]["calls"])}
    if judge is not None:
        expected["judge"] = {"criteria": list(judge["criteria"]),
                             "reference": judge.get("reference"),
                             "min_score": judge["min_score"]}
    approvals = case.get("approvals", DEFAULT_APPROVAL_DECISION)
    return {"id": case_id, "name": case["name"], "input": case["input"],
            "history": [dict(turn) for turn in case["history"]],
            "tags": list(case["tags"]), "expected": expected,
            "approvals": dict(approvals) if isinstance(approvals, dict) else approvals}


def do_put_fixtures(user: User, design: Design, read_revision: int,
                    cases: list[dict[str, Any]]) -> None:
    """Store the cases as the next revision if `read_revision` is still the latest; else 409.

    As designs.actions.do_save_revision: the conditional UPDATE is the claim, and the
    first PUT (revision 0) is an INSERT the primary key lets only one of two win.
    """
    try:
        with transaction.atomic():
            if read_revision == 0:
                Fixtures.objects.create(design=design, revision=1, cases=cases,
                                        updated_by=user)
                return
            claimed = Fixtures.objects.filter(design=design, revision=read_revision).update(
                revision=read_revision + 1, cases=cases, updated_by=user,
                updated_at=timezone.now())
            if claimed != 1:
                raise _stale(design)
    except IntegrityError:
        raise _stale(design) from None


def _stale(design: Design) -> APIError:
    latest = Fixtures.objects.filter(design=design).values_list("revision", flat=True).first()
    return APIError(409, "stale_revision",
                    "The test cases changed since you read them; reload them and apply your "
                    "change again.", {"current_revision": latest or 0})


def suggestions(design: Design) -> list[dict[str, Any]]:
    """Proposed cases for the design's saved graph (none when it does not normalize).

    `phrased` is "conditions": rephrasing by a model is not done yet (docs/decisions/).
    """
    graph = revision_report(design.current(), design.project).graph
    if graph is None:
        return []
    return [{**s.to_case(), "phrased": "conditions"} for s in suggest_cases(graph)]


def do_save_suggestions(user: User, design: Design, read_revision: int,
                        proposals: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Append the proposals whose name no case has yet, as the next fixtures revision
    (409 when `read_revision` is stale); the saved cases, with their new IDs."""
    current = Fixtures.objects.filter(design=design).first()
    cases: list[dict[str, Any]] = list(current.cases) if current else []
    if (current.revision if current else 0) != read_revision:
        raise _stale(design)
    names = {c.get("name") for c in cases}
    used: dict[str, int] = {str(c.get("id")): i for i, c in enumerate(cases)}
    fresh = [p for p in proposals if p["name"] not in names]
    saved = [_stored({"id": None, "name": p["name"], "input": p["input"], "history": [],
                      "tags": p["tags"], "expected": {"calls": p["expected"]["calls"]}}, used)
             for p in fresh[:max(0, MAX_CASES - len(cases))]]
    do_put_fixtures(user, design, read_revision, cases + saved)
    return saved
