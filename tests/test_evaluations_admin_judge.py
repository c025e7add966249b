"""Ops staff see, with each evaluation's verdict, who chose its judge (the operator or
the project) and where a project's judge pointed; they can list the project-judged
ones; a design's page says whether staff set its gate."""

from __future__ import annotations

import re
from typing import Any

from django.test import Client

from designs.models import Design
from evaluations.models import Evaluation
from tests.designs_helpers import make_design


def shown(page: str, label: str) -> str:
    """The read-only value the admin page shows under that label."""
    found = re.search(rf"<label>{label}:</label>\s*<div class=\"readonly\">(.*?)</div>", page)
    assert found is not None, label
    return found.group(1)


def test_it_shows_who_chose_the_judge(staff: Client, alice: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    by_project = Evaluation.objects.create(
        project=acme, design=design, revision=1, content_sha256="a" * 64, status="completed",
        passed=True, judge_backend="resource", judge_model="resource:house-judge",
        rubric_version="kionga-rubric-1", judge_chosen_by="project",
        judge_destination="judge.acme.test")
    Evaluation.objects.create(
        project=acme, design=design, revision=1, content_sha256="a" * 64, status="completed",
        passed=True, judge_backend="openai", judge_model="gpt-judge",
        rubric_version="kionga-rubric-1", judge_chosen_by="operator")
    page = staff.get(f"/admin/evaluations/evaluation/{by_project.pk}/change/").content.decode()
    assert shown(page, "Judge chosen by") == "project"
    assert shown(page, "Judge destination") == "judge.acme.test"
    listed = staff.get("/admin/evaluations/evaluation/?judge_chosen_by__exact=project")
    text = listed.content.decode()
    assert "resource:house-judge" in text and "gpt-judge" not in text

    Design.objects.filter(pk=design.pk).update(require_evaluation=True,
                                               require_evaluation_by_staff=True)
    page = staff.get(f"/admin/designs/design/{design.pk}/change/").content.decode()
    assert 'alt="True"' in shown(page, "Gate set by staff")
