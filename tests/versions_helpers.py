"""Helpers for the version tests: save a graph as a revision, publish it, nest versions."""

from __future__ import annotations

import copy
from typing import Any

from django.contrib.auth.models import User

from designs.actions import do_create_design, do_save_revision
from designs.models import Design, Version
from designs.publish import PublishRequest, do_publish
from kionga.models import Project

EDGE = {"from_port": "out", "to_port": "in"}


def linear(*nodes: dict[str, Any], settings: dict[str, int] | None = None) -> dict[str, Any]:
    """input -> nodes... -> output, each node's `out` into the next one's `in`."""
    chain = [{"id": "input", "kind": "input"}, *nodes, {"id": "output", "kind": "output"}]
    for i, node in enumerate(chain):
        node.setdefault("name", node["id"])
        node.setdefault("x", 40 + 200 * i)
        node.setdefault("y", 160)
    edges = [{"from": a["id"], "to": b["id"], **EDGE}
             for a, b in zip(chain, chain[1:], strict=False)]
    return {"schema_version": 2, "nodes": chain, "edges": edges,
            "settings": settings or {"max_steps": 50, "timeout_seconds": 60,
                                     "max_tokens": 50000}}


def prompt_graph(template: str = "Echo: {input}") -> dict[str, Any]:
    return linear({"id": "fill", "kind": "prompt", "config": {"template": template}})


def flow_graph(kind: str, version_id: str, **config: str) -> dict[str, Any]:
    """input -> a subflow/map/loop node on version_id -> output."""
    return linear({"id": "flow", "kind": kind, "config": {"subflow": version_id, **config}})


def save(user: User, design: Design, graph: dict[str, Any]) -> Design:
    design.refresh_from_db()
    return do_save_revision(user, design, design.revision, copy.deepcopy(graph), None, None)


def publish(user: User, design: Design, revision: int | None = None,
            notes: str = "") -> Version:
    design.refresh_from_db()
    version, _ = do_publish(user, design, PublishRequest(revision or design.revision, notes,
                                                         None))
    return version


def published(user: User, project: Project, graph: dict[str, Any],
              name: str = "Flow") -> Version:
    """A new design holding `graph`, published as its version 1."""
    design = do_create_design(user, project, name, "", copy.deepcopy(graph))
    return publish(user, design)


def publish_url(design: Design) -> str:
    return f"/api/v1/agent-designs/{design.pk}/publish"
