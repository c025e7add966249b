"""Gates stored before who set them was recorded: one whose latest change was a non-staff
user switching it on stays the project's; any other gate that is on becomes a staff gate
(the safe side) (docs/decisions/staff-gates-need-the-operators-judge.md)."""

from __future__ import annotations

import importlib
from typing import Any

from django.apps import apps

from designs.models import Design
from kionga import audit
from tests.conftest import make_member
from tests.designs_helpers import make_design

backfill = importlib.import_module("designs.migrations.0004_staff_gate").backfill


def gate_changed(design: Design, actor: Any, on: bool) -> None:
    audit.record("design.require_evaluation_changed", project=design.project, actor=actor,
                 target_type="design", target_id=design.pk,
                 details={"require_evaluation": on, "revision": 1})


def test_it_keeps_the_projects_gates_and_makes_the_others_staff_gates(
        alice: Any, carol: Any, acme: Any) -> None:
    ops = make_member("ops", None)
    ops.is_staff = True
    ops.save()
    by_carol, by_admin_site, by_staff_api, on_create, off = (
        make_design(alice, acme, name) for name in ("a", "b", "c", "d", "e"))
    gate_changed(by_carol, carol, True)
    gate_changed(by_staff_api, carol, True)
    gate_changed(by_staff_api, ops, True)
    gate_changed(off, carol, False)
    Design.objects.exclude(pk=off.pk).update(require_evaluation=True)
    backfill(apps, None)
    staff = dict(Design.objects.values_list("name", "require_evaluation_by_staff"))
    assert staff == {"a": False, "b": True, "c": True, "d": True, "e": False}
