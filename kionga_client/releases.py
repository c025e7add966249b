"""The operations that take a design towards release: evaluate it, publish a revision,
list its versions. Like `operations`, each returns a `Result` or raises `KiongaError`.

`evaluate` runs every fixture case as a gate evaluation, the only kind that can open
the quality gate, so `kionga evaluate ID` then `kionga publish ID --evaluation
EVALUATION_ID` works as is. Every hint of a refused publish names the commands that
lead through the gate, with this design's ID and revision filled in."""

from __future__ import annotations

import time
from typing import Any

from kionga_client.errors import KiongaError
from kionga_client.gateway import Gateway
from kionga_client.operations import Result, design_get

# The gateway's evaluation status words (evaluations/models.py EVALUATION_STATUSES).
EVALUATION_FINAL = ("completed", "failed", "cancelled")
CREATED_STATUS = 201  # a publish that created a version (200: the same behaviour's)


def evaluate(gw: Gateway, design_id: str, *, revision: int | None = None, gate: bool = True,
             allow_side_effects: bool = False, detach: bool = False,
             poll: float = 0.5, timeout: float = 600.0) -> Result:
    """Start an evaluation of the design's fixtures and, unless detached, wait for it.
    `gate` (every case; the default) is what a publish's quality gate accepts."""
    body: dict[str, Any] = {"gate": gate, "allow_side_effects": allow_side_effects}
    if revision is not None:
        body["revision"] = check_revision(design_get(gw, design_id), revision)
    try:
        evaluation = gw.request("POST", f"/agent-designs/{design_id}/evaluations", json=body,
                                not_found="DESIGN_NOT_FOUND")
    except KiongaError as exc:
        if "cases" in (exc.details.get("fields") or {}):  # no test case to run
            exc.hint = no_cases_hint(gw.designer_page(design_id), design_id)
        raise
    deadline = time.monotonic() + timeout
    while not detach and evaluation.get("status") not in EVALUATION_FINAL:
        if time.monotonic() > deadline:
            raise KiongaError("RUN_TIMEOUT", "The evaluation did not finish in time.",
                              data=_evaluation_data(evaluation))
        time.sleep(poll)
        evaluation = gw.request("GET", f"/agent-evaluations/{evaluation['id']}",
                                not_found="EVALUATION_NOT_FOUND")
    data = _evaluation_data(evaluation)
    if evaluation.get("status") == "cancelled":
        raise KiongaError("RUN_CANCELLED", "The evaluation was cancelled.", data=data)
    if evaluation.get("status") == "failed":
        raise KiongaError("RUN_FAILED", f"The evaluation could not finish: "
                          f"{evaluation.get('error') or 'no reason given'}.", data=data)
    if evaluation.get("status") == "completed" and not evaluation.get("passed"):
        counts = evaluation.get("counts") or {}
        raise KiongaError("EVALUATION_FAILED", f"The evaluation did not pass: "
                          f"{counts.get('failed', '?')} of {counts.get('total', '?')} cases "
                          f"failed.", data=data)
    return Result(data)


def no_cases_hint(canvas: str, design_id: str) -> str:
    return (f"Add test cases first: on the design's canvas, {canvas} (Test & publish: "
            f"Suggest test cases), or with PUT /api/v1/agent-designs/{design_id}/fixtures; "
            "then evaluate again.")


def _evaluation_data(evaluation: dict[str, Any]) -> dict[str, Any]:
    return {"evaluation_id": evaluation.get("id"), **evaluation}


def publish(gw: Gateway, design_id: str, *, revision: int | None = None, notes: str = "",
            evaluation_id: str | None = None) -> Result:
    """Publish a revision (the latest by default). `data.created` says whether a version
    was made; when the same behaviour was published before, it is that version."""
    revision = check_revision(design_get(gw, design_id), revision)
    body: dict[str, Any] = {"revision": revision, "notes": notes}
    if evaluation_id:
        body["evaluation_id"] = evaluation_id
    try:
        status, version = gw.exchange("POST", f"/agent-designs/{design_id}/publish",
                                      json=body, not_found="DESIGN_NOT_FOUND")
    except KiongaError as exc:
        if exc.code == "QUALITY_GATE":
            exc.hint = quality_gate_hint(design_id, revision, evaluation_id)
            exc.data = {"design_id": design_id, "revision": revision,
                        "evaluation_id": evaluation_id}
        raise
    data = {"version_id": version["id"], "created": None, **version}
    data["created"] = publish_created(status, version)
    return Result(data)


def publish_created(status: int, answer: dict[str, Any]) -> bool:
    """Whether a publish made a new version: the answer's `created`, or from a gateway
    that does not send it, its status (201 new, 200 the existing one)."""
    created = answer.get("created")
    return created if isinstance(created, bool) else status == CREATED_STATUS


def quality_gate_hint(design_id: str, revision: int, evaluation_id: str | None) -> str:
    """The way through a refused gate: evaluate this revision (every case), then publish
    it with that evaluation. Never `publish` again as is: it would be refused again."""
    steps = (f"evaluate revision {revision}: `kionga evaluate {design_id} --revision "
             f"{revision}`; when it passes, publish with the evaluation_id it prints: "
             f"`kionga publish {design_id} --revision {revision} --evaluation "
             f"EVALUATION_ID`")
    if evaluation_id is None:
        return f"This design needs a passing evaluation to publish: {steps}."
    return (f"The message says why this evaluation cannot open the gate. Then {steps} "
            "(if cases fail, fix the graph or the fixtures first, save, and evaluate the "
            "new revision).")


def check_revision(design: dict[str, Any], revision: int | None) -> int:
    """`revision` (default: the latest) if the design has it; else NOT_FOUND saying which
    revisions it has, so the 404 is not taken for a missing design."""
    latest = int(design["revision"])
    if revision is None:
        return latest
    if not 1 <= revision <= latest:
        raise KiongaError("NOT_FOUND", f"Design {design['id']} has no revision {revision}: "
                          f"its revisions are 1 to {latest}.",
                          hint=f"Leave --revision out for the latest ({latest}).",
                          data={"design_id": design["id"], "revision": latest})
    return revision


def versions_list(gw: Gateway, design_id: str) -> Result:
    found = gw.request("GET", f"/agent-designs/{design_id}/versions",
                       not_found="DESIGN_NOT_FOUND")
    return Result({"design_id": design_id, "versions": found["versions"]})
