"""A publish gate staff switch on — in the admin site, or a staff user through the API —
is a staff gate: the project's editors and admins cannot switch it off (403
`staff_gate`, with or without a graph), staff can; a gate the project switched on stays
the project's (docs/decisions/staff-gates-need-the-operators-judge.md)."""

from __future__ import annotations

from typing import Any

from django.test import Client

from designs.models import Design, DesignRevision
from kionga.models import AuditEvent, Role
from tests.conftest import Api, make_member
from tests.designs_helpers import assistant_graph, make_design

DESIGNS = "/api/v1/agent-designs"


def design_url(design: Design) -> str:
    return f"{DESIGNS}/{design.pk}"


def admin_save(staff: Client, design: Design, require_evaluation: bool) -> None:
    """Save the design's admin page as staff would, with the gate's checkbox set so."""
    revisions = list(design.revisions.order_by("-number"))
    form: dict[str, Any] = {
        "project": design.project_id, "name": design.name, "description": design.description,
        "revisions-TOTAL_FORMS": len(revisions), "revisions-INITIAL_FORMS": len(revisions),
        "revisions-MIN_NUM_FORMS": 0, "revisions-MAX_NUM_FORMS": 1000,
        "versions-TOTAL_FORMS": 0, "versions-INITIAL_FORMS": 0,
        "versions-MIN_NUM_FORMS": 0, "versions-MAX_NUM_FORMS": 1000,
    }
    for index, revision in enumerate(revisions):
        form[f"revisions-{index}-id"] = revision.pk
        form[f"revisions-{index}-design"] = design.pk
    if require_evaluation:
        form["require_evaluation"] = "on"
    response = staff.post(f"/admin/designs/design/{design.pk}/change/", form)
    assert response.status_code == 302, response.content.decode()[:3000]


def gate_of(design: Design) -> tuple[bool, bool]:
    design.refresh_from_db()
    return design.require_evaluation, design.require_evaluation_by_staff


def test_a_gate_staff_switch_on_in_the_admin_cannot_be_switched_off_by_the_project(
        api: Api, staff: Client, alice: Any, carol: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    admin_save(staff, design, True)
    assert gate_of(design) == (True, True)
    shown = api.client_for(carol).get(design_url(design)).json()
    assert (shown["require_evaluation"], shown["require_evaluation_by_staff"]) == (True, True)

    for user in (carol, alice):  # an editor, and the project's admin
        off = api.client_for(user).put(design_url(design), {
            "revision": 1, "require_evaluation": False}, format="json")
        error = api.assert_error(off, 403, "staff_gate")
        assert "only staff can switch this gate off" in error["message"]
        with_graph = api.client_for(user).put(design_url(design), {
            "revision": 1, "graph": assistant_graph(), "require_evaluation": False},
            format="json")
        api.assert_error(with_graph, 403, "staff_gate")
    assert gate_of(design) == (True, True)
    assert DesignRevision.objects.filter(design=design).count() == 1  # nothing saved

    # Editors still change everything else, and sending `true` changes nothing.
    renamed = api.client_for(carol).put(design_url(design), {
        "revision": 1, "name": "Renamed", "require_evaluation": True}, format="json")
    assert renamed.status_code == 200, renamed.content
    assert gate_of(design) == (True, True)

    admin_save(staff, Design.objects.get(pk=design.pk), False)
    assert gate_of(design) == (False, False)
    changes = list(AuditEvent.objects.filter(action="design.require_evaluation_changed")
                   .order_by("id").values_list("actor__username", "details"))
    assert changes == [("ops", {"require_evaluation": True, "by_staff": True, "revision": 1}),
                       ("ops", {"require_evaluation": False, "by_staff": False,
                                "revision": 1})]


def test_a_staff_user_through_the_api_sets_a_staff_gate(api: Api, alice: Any, carol: Any,
                                                        acme: Any) -> None:
    ops = make_member("ops", acme, Role.EDITOR)
    ops.is_staff = True
    ops.save()
    design = make_design(alice, acme)
    # The project's gate first: its editors switch it on and off.
    on = api.client_for(carol).put(design_url(design), {
        "revision": 1, "require_evaluation": True}, format="json")
    assert on.json()["require_evaluation_by_staff"] is False
    # Staff sending `true` make it theirs.
    claimed = api.client_for(ops).put(design_url(design), {
        "revision": 1, "require_evaluation": True}, format="json")
    assert claimed.status_code == 200, claimed.content
    assert claimed.json()["require_evaluation_by_staff"] is True
    off = api.client_for(carol).put(design_url(design), {
        "revision": 1, "require_evaluation": False}, format="json")
    api.assert_error(off, 403, "staff_gate")
    staff_off = api.client_for(ops).put(design_url(design), {
        "revision": 1, "require_evaluation": False}, format="json")
    assert staff_off.status_code == 200, staff_off.content
    assert gate_of(design) == (False, False)

    created = api.client_for(ops).post(DESIGNS, {"project_id": acme.pk, "name": "Staff-gated",
                                                 "require_evaluation": True}, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["require_evaluation_by_staff"] is True


def test_the_projects_own_gate_stays_the_projects(api: Api, staff: Client, alice: Any,
                                                  carol: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    api.client_for(carol).put(design_url(design), {"revision": 1, "require_evaluation": True},
                              format="json")
    assert gate_of(design) == (True, False)
    # A staff save that leaves the gate as it is does not take it over.
    admin_save(staff, Design.objects.get(pk=design.pk), True)
    assert gate_of(design) == (True, False)
    off = api.client_for(carol).put(design_url(design), {
        "revision": 1, "require_evaluation": False}, format="json")
    assert off.status_code == 200, off.content
    assert gate_of(design) == (False, False)
