"""Pinned outputs (contracts/pins.py): read, set and clear a design's pins.

A pin belongs to the design, not to a revision: it is set against the design's current
revision (the node must be there and have the port, the value must fit the port's type
and the 64 KiB limit), and a run of any revision takes the pins that fit its graph.
Editors set and clear pins, viewers read them; each change is audited.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from contracts.normalize import NotNormalizable, normalize
from contracts.pins import pin_port_type, pinned_reuse, value_problem
from designs.actions import check_design_access
from designs.models import Design, Pin
from kionga import audit
from kionga.access import AnyUser
from kionga.errors import invalid_field, not_found
from kionga.models import Role


def pins_of(user: AnyUser, design_id: uuid.UUID) -> dict[str, Any]:
    design = check_design_access(user, design_id)
    return {"pins": [pin.to_dict() for pin in design.pins.select_related("author")]}


def do_set_pin(user: User, design_id: uuid.UUID, node_id: str, port: str,
               value: Any) -> dict[str, Any]:
    """Pin `value` on `node_id`'s output `port` (replacing the node's pin), or 400."""
    design = check_design_access(user, design_id, Role.EDITOR)
    try:
        graph = normalize(design.current().graph).graph
    except NotNormalizable:
        raise invalid_field("node_id", "The design's graph cannot run: fix it first.") from None
    if not any(node["id"] == node_id for node in graph["nodes"]):
        raise not_found(f"The design has no node {node_id!r}.")
    port_type = pin_port_type(graph, node_id, port)
    if port_type is None:
        raise invalid_field("port", f"Node {node_id!r} has no output {port!r}.")
    problem = value_problem(value, port_type)
    if problem is not None:
        raise invalid_field("value", problem)
    with transaction.atomic():
        pin, _ = Pin.objects.update_or_create(
            design=design, node_id=node_id,
            defaults={"port": port, "value": value, "author": user})
        audit.record("design.pin_set", project=design.project, actor=user,
                     target_type="design", target_id=design.pk,
                     details={"node_id": node_id, "port": port})
    return pin.to_dict()


def do_clear_pin(user: User, design_id: uuid.UUID, node_id: str) -> None:
    design = check_design_access(user, design_id, Role.EDITOR)
    with transaction.atomic():
        deleted, _ = Pin.objects.filter(design=design, node_id=node_id).delete()
        if not deleted:
            raise not_found(f"Node {node_id!r} has no pin.")
        audit.record("design.pin_cleared", project=design.project, actor=user,
                     target_type="design", target_id=design.pk, details={"node_id": node_id})


def design_run_reuse(design: Design, graph: dict[str, Any]) -> dict[str, Any]:
    """The runner's `reuse` entries for a design-time run of `graph`: the design's pins
    that fit it. Only design runs take them (never a version's, an evaluation's or a
    deployed agent's)."""
    pins = {node: {"port": port, "value": value} for node, port, value
            in Pin.objects.filter(design=design).values_list("node_id", "port", "value")}
    return pinned_reuse(graph, pins)
