"""Helpers for the operations tests: deployed agents, rollup rows."""

from __future__ import annotations

from typing import Any

from django.db import connection

from deployments.models import Agent, Rollout
from deployments.serializers import DEFAULT_AUTOSCALING, DEFAULT_RESOURCES
from designs.models import Version
from operations.rollups import HISTOGRAM

SETTINGS = {"autoscaling": DEFAULT_AUTOSCALING, "resources": DEFAULT_RESOURCES,
            "require_evaluation": False}


def agent_of(version: Version, name: str) -> Agent:
    agent = Agent.objects.create(project=version.project, design=version.design, name=name,
                                 version=version, settings=SETTINGS)
    Rollout.objects.create(agent=agent, version=version, settings=SETTINGS)
    return agent


def rollup_rows() -> tuple[list[Any], list[Any]]:
    """Every rollup row (project, agent, slot, ended, completed, errors, tokens, cost,
    histogram), in key order, and the failure rows (project, slot, code, count)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT project_id, agent_id, slot, ended, completed, errors, tokens, "
                       f"cost, {', '.join(HISTOGRAM)} FROM operations_rollup "
                       "ORDER BY project_id, agent_id NULLS FIRST, version_id, slot")
        rollups = cursor.fetchall()
        cursor.execute("SELECT project_id, slot, code, count FROM operations_failurerollup "
                       "ORDER BY 1, 2, 3")
        return rollups, cursor.fetchall()
