"""Evaluations stored before who chose their judge was recorded: one judged by a model
resource of its project — `resource:<ID>`, or a bare resource ID from before the judge's
model names — was judged by the project's choice; any other by the operator's
(docs/decisions/staff-gates-need-the-operators-judge.md)."""

from __future__ import annotations

import importlib
from typing import Any

from django.apps import apps

from evaluations.models import Evaluation
from kionga.resource_models import ModelEndpoint
from tests.designs_helpers import make_design

backfill = importlib.import_module("evaluations.migrations.0004_judge_chosen_by").backfill


def test_it_records_who_chose_the_judge_of_earlier_evaluations(alice: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    ModelEndpoint.objects.create(project=acme, key="house-model",
                                 base_url="https://m.acme.test/v1", model_name="m")

    def stored(backend: str, model: str) -> Evaluation:
        return Evaluation.objects.create(
            project=acme, design=design, revision=1, content_sha256="a" * 64,
            judge_backend=backend, judge_model=model, rubric_version="kionga-rubric-1")

    resource, bare, platform = (stored("resource", "resource:house-model"),
                                stored("openai", "house-model"), stored("openai", "gpt-judge"))
    Evaluation.objects.update(judge_chosen_by="operator")
    backfill(apps, None)
    chosen = {found.pk: Evaluation.objects.get(pk=found.pk).judge_chosen_by
              for found in (resource, bare, platform)}
    assert chosen == {resource.pk: "project", bare.pk: "project", platform.pk: "operator"}
