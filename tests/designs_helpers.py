"""Helpers for the designs tests: a valid graph and a design owned by alice in acme."""

from __future__ import annotations

import copy
from typing import Any

from django.contrib.auth.models import User

from designs.actions import do_create_design
from designs.models import Design
from designs.starter_templates import TEMPLATES
from kionga.models import Project


def assistant_graph() -> dict[str, Any]:
    return copy.deepcopy(TEMPLATES[0]["graph"])


def make_design(owner: User, project: Project, name: str = "Support agent") -> Design:
    return do_create_design(owner, project, name, "", assistant_graph())
