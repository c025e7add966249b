"""Helpers for the fixtures (test cases) tests: a branching design and its routes."""

from __future__ import annotations

import copy
from typing import Any

from django.contrib.auth.models import User

from designs.actions import do_create_design
from designs.models import Design
from designs.starter_templates import TEMPLATES
from kionga.models import Project


def triage_graph() -> dict[str, Any]:
    found = next(t for t in TEMPLATES if t["id"] == "support-triage")
    return copy.deepcopy(found["graph"])


def make_triage(owner: User, project: Project) -> Design:
    return do_create_design(owner, project, "Triage", "", triage_graph())


def fixtures_url(design: Design) -> str:
    return f"/api/v1/agent-designs/{design.pk}/fixtures"


def suggest_url(design: Design) -> str:
    return f"/api/v1/agent-designs/{design.pk}/fixtures/suggest"


def case(name: str = "Refund", **extra: Any) -> dict[str, Any]:
    return {"name": name, "input": "I want a refund", **extra}
