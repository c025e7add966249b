"""Who set a design's publish gate (`require_evaluation`), and who may switch it off.

A gate staff switch on — in the admin site, or a staff user through the API — is a
staff gate (`require_evaluation_by_staff`): the project's editors cannot switch it off,
and only an evaluation judged by the operator's model opens it (designs.quality_gate).
A gate a project editor switches on is the project's: its editors switch it off again.
docs/decisions/staff-gates-need-the-operators-judge.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from designs.models import Design
from kionga import audit
from kionga.errors import APIError
from kionga.site import may_use_admin


@dataclass(frozen=True)
class Gate:
    on: bool
    by_staff: bool

    @classmethod
    def of(cls, design: Design) -> Gate:
        return cls(design.require_evaluation, design.require_evaluation_by_staff)


def is_staff(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Ops staff: whoever may use the admin site."""
    return may_use_admin(user)


def gate_after(current: Gate, value: bool, staff: bool) -> Gate:
    """The gate once someone sends `require_evaluation: value`; 403 staff_gate when a
    non-staff user would switch off a gate staff set. Staff sending `true` make the gate
    theirs, even one the project had already switched on."""
    if not value and current.by_staff and not staff:
        raise APIError(403, "staff_gate",
                       "Staff require a passing evaluation to publish this design: only "
                       "staff can switch this gate off.",
                       {"require_evaluation_by_staff": True})
    return Gate(value, value and (staff or current.by_staff))


def record_gate_change(user: Any, design: Design, before: Gate, after: Gate) -> None:
    """Audit a change of the gate (who switched it on or off, and whether as staff)."""
    if before == after:
        return
    audit.record("design.require_evaluation_changed", project=design.project, actor=user,
                 target_type="design", target_id=design.pk,
                 details={"require_evaluation": after.on, "by_staff": after.by_staff,
                          "revision": design.revision})
