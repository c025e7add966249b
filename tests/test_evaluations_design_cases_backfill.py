"""Evaluations stored before `design_cases` existed get it where it can be known: a gate
evaluation ran every case; another ran every case of its fixtures revision when the
design's fixtures are still at that revision; otherwise it stays unknown (None)."""

from __future__ import annotations

import importlib
from typing import Any

from django.apps import apps

from evaluations.models import Evaluation, Fixtures
from tests.evaluations_helpers import calls_only, make_evaluated

backfill = importlib.import_module(
    "evaluations.migrations.0003_evaluation_design_cases").backfill


def stored(design: Any, *, gate: bool, ran: int, fixtures_revision: int) -> Evaluation:
    found = Evaluation.objects.create(
        project=design.project, design=design, revision=1, content_sha256="a" * 64,
        gate=gate, fixtures_revision=fixtures_revision, status="completed", passed=True,
        judge_backend="openai", judge_model="judge", rubric_version="kionga-rubric-1")
    for position in range(ran):
        found.cases.create(position=position, case_id=f"c{position}", name=f"c{position}",
                           case=calls_only(f"c{position}", "x"), status="passed")
    return found


def test_it_backfills_what_can_be_known(alice: Any, acme: Any) -> None:
    design = make_evaluated(alice, acme, [calls_only("c0", "x"), calls_only("c1", "y"),
                                          calls_only("c2", "z")])
    revision = Fixtures.objects.get(design=design).revision
    gate = stored(design, gate=True, ran=2, fixtures_revision=revision - 1)
    current = stored(design, gate=False, ran=1, fixtures_revision=revision)
    older = stored(design, gate=False, ran=1, fixtures_revision=revision - 1)
    backfill(apps, None)
    for found, expected in ((gate, 2), (current, 3), (older, None)):
        found.refresh_from_db()
        assert found.design_cases == expected
