"""Fixtures (a design's test cases): `check_*` validate, `do_*` write. Views call these."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, Final

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from contracts.registry import COMPONENTS
from contracts.suggest import suggest_cases
from designs.models import Design
from designs.validation import revision_report
from evaluations.models import Fixtures
from evaluations.serializers import (
    DEFAULT_MIN_SCORE,
    MAX_CASE_INPUT_CHARS,
    MAX_CASES,
    MAX_REFERENCE_CHARS,
)
from kionga.errors import APIError, invalid_field, not_found
from runner.request import DEFAULT_APPROVAL_DECISION, ScriptedApprovals
from runs.models import Run


def fixtures_dict(design: Design) -> dict[str, Any]:
    found = Fixtures.objects.filter(design=design).first()
    return {
        "design_id": str(design.pk),
        "revision": found.revision if found else 0,
        "cases": found.cases if found else [],
        "updated_at": found.updated_at.isoformat() if found else None,
    }


def case_answer(design: Design, revision: int, case: dict[str, Any]) -> dict[str, Any]:
    """The answer of a POST or PUT of one case."""
    return {"design_id": str(design.pk), "revision": revision, "case": case}


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


# --- one case at a time (POST …/fixtures/cases, PUT/DELETE …/fixtures/cases/{case_id}) ---

FROM_RUN_CRITERIA: Final = ["task_completion"]


def check_case_body(design: Design, body: dict[str, Any]) -> dict[str, Any]:
    """The case a POST or PUT of one case describes (not yet checked against the other
    cases): with `from_run`, the input (unless given) and, with `expect_output`, the
    expected answer are that run's; 404 for a run not of this design, 400 for one without
    an output or with text over the cases' limits."""
    case = {k: v for k, v in body.items() if k not in ("from_run", "expect_output")}
    if body["from_run"] is None:
        if body["expect_output"]:
            raise invalid_field("expect_output", "Give from_run: the output is a run's.")
        if case["input"] is None:
            raise invalid_field("input", "This field is required.")
        return case
    run = Run.objects.filter(pk=body["from_run"], design=design).first()
    if run is None:
        raise not_found("Run not found in this design.")
    if case["input"] is None:
        if len(run.input) > MAX_CASE_INPUT_CHARS:
            raise invalid_field("from_run", f"The run's input is longer than a case's "
                                f"{MAX_CASE_INPUT_CHARS} characters.")
        case["input"] = run.input
    if body["expect_output"]:
        if run.output is None:
            raise invalid_field("expect_output", f"The run has no output (it is {run.status}).")
        if len(run.output) > MAX_REFERENCE_CHARS:
            raise invalid_field("expect_output", f"The run's output is longer than an "
                                f"expected answer's {MAX_REFERENCE_CHARS} characters.")
        judge = case["expected"].get("judge") or {"criteria": FROM_RUN_CRITERIA,
                                                  "min_score": DEFAULT_MIN_SCORE}
        case["expected"] = {**case["expected"], "judge": {**judge, "reference": run.output}}
    return case


def do_add_case(user: User, design: Design, case: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """Append a case; (the new fixtures revision, the stored case)."""
    def add(cases: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
        if len(cases) >= MAX_CASES:
            raise APIError(400, "invalid_request", f"A design has at most {MAX_CASES} test "
                           "cases; delete one first.", {"fields": {"cases": [
                               f"At most {MAX_CASES}."]}})
        return [*cases, case], len(cases)
    return _change_cases(user, design, add)


def do_update_case(user: User, design: Design, case_id: str,
                   case: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """Replace the case `case_id` (its ID and position kept); 404 when there is none."""
    if case["id"] not in (None, case_id):
        raise invalid_field("id", "A case's ID does not change: leave it out or send "
                            f"{case_id!r}.")
    def update(cases: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
        index = _index_of(cases, case_id)
        return [*cases[:index], {**case, "id": case_id}, *cases[index + 1:]], index
    return _change_cases(user, design, update)


def do_delete_case(user: User, design: Design, case_id: str) -> int:
    """Delete the case `case_id`; the new fixtures revision (404 when there is none)."""
    def delete(cases: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
        index = _index_of(cases, case_id)
        return [*cases[:index], *cases[index + 1:]], -1
    return _change_cases(user, design, delete)[0]


def _index_of(cases: list[dict[str, Any]], case_id: str) -> int:
    for index, found in enumerate(cases):
        if found.get("id") == case_id:
            return index
    raise not_found("Test case not found in this design.")


Change = Callable[[list[dict[str, Any]]], tuple[list[dict[str, Any]], int]]


def _change_cases(user: User, design: Design, change: Change) -> tuple[int, dict[str, Any]]:
    """Apply `change` (the new cases, and the index of the case it answers) to the
    design's cases under the fixtures row's lock, checked as a PUT is (check_cases), as
    the next revision: a PUT that read the revision before is then stale (409)."""
    for _attempt in range(2):  # two first cases at once: one INSERT wins, the other retries
        try:
            with transaction.atomic():
                current = Fixtures.objects.select_for_update().filter(design=design).first()
                cases, index = change(list(current.cases) if current else [])
                stored = check_cases(design, cases)
                if current is None:
                    Fixtures.objects.create(design=design, revision=1, cases=stored,
                                            updated_by=user)
                    return 1, stored[index] if index >= 0 else {}
                current.revision += 1
                current.cases, current.updated_by = stored, user
                current.save(update_fields=["revision", "cases", "updated_by", "updated_at"])
                return current.revision, stored[index] if index >= 0 else {}
        except IntegrityError:
            continue
    raise _stale(design)
