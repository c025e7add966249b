"""Helpers of the projects self-administration tests (members, tokens, resources)."""

from __future__ import annotations

from kionga.models import Project


def members_url(project: Project) -> str:
    return f"/api/v1/projects/{project.pk}/members"


def resources_url(project: Project, kind: str = "") -> str:
    return f"/api/v1/projects/{project.pk}/resources" + (f"/{kind}" if kind else "")
