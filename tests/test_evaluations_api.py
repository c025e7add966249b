"""The evaluations routes: what a start refuses, roles (viewers read, editors start,
cancel and review), other tenants' 404, reviews audited, and the admin's pages."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from evaluations import progress
from evaluations.models import Evaluation
from kionga.models import AuditEvent
from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.evaluations_helpers import (
    calls_only,
    case_of,
    end_run,
    evaluations_url,
    gateway_queue,
    make_evaluated,
    settle_all,
)
from tests.versions_helpers import publish_url

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["gateway_queue"]


def test_it_refuses_bad_starts(api: Api, alice: Any, acme: Any, runner_configured: Any,
                               gateway_queue: redis.Redis) -> None:
    design = make_evaluated(alice, acme, [calls_only("c0", "x"), calls_only("c1", "y")])
    client = api.client_for(alice)
    url = evaluations_url(design)
    bad = {
        "cases": ({"cases": ["c0", "nope"]}, "Not cases of this design: nope."),
        "gate": ({"gate": "yes"}, None),
        "revision": ({"revision": 9}, None),
    }
    for field, (body, words) in bad.items():
        response = client.post(url, body, format="json")
        if field == "revision":
            assert response.status_code == 404
            continue
        error = api.assert_error(response, 400, "invalid_request")
        assert field in error["details"]["fields"]
        assert words is None or words in error["message"]
    gated = api.assert_error(client.post(url, {"gate": True, "cases": ["c0"]}, format="json"),
                             400, "invalid_request")
    assert "leave cases out" in gated["message"]
    other = make_design(alice, acme, "Other")
    version = client.post(publish_url(other), {"revision": 1}, format="json").json()["id"]
    error = api.assert_error(client.post(url, {"version_id": version}, format="json"), 400,
                             "invalid_request")
    assert "version_id" in error["details"]["fields"]
    empty = make_design(alice, acme, "No cases")
    api.assert_error(client.post(evaluations_url(empty), {}, format="json"), 400,
                     "invalid_request")
    assert Evaluation.objects.count() == 0
    subset = client.post(url, {"cases": ["c1"]}, format="json").json()
    assert [c["case_id"] for c in subset["cases"]] == ["c1"] and subset["gate"] is False


def test_it_evaluates_a_published_version(api: Api, alice: Any, acme: Any,
                                          runner_configured: Any,
                                          gateway_queue: redis.Redis) -> None:
    design = make_evaluated(alice, acme, [calls_only("c0", "x")])
    client = api.client_for(alice)
    version = client.post(publish_url(design), {"revision": 1}, format="json").json()
    started = client.post(evaluations_url(design), {"version_id": version["id"], "gate": True},
                          format="json").json()
    assert started["version_id"] == version["id"]
    assert started["content_sha256"] == version["content_sha256"]
    assert started["allow_side_effects"] is True  # approved at publish


def test_it_lets_viewers_read_only_and_hides_it_from_other_tenants(
        api: Api, alice: Any, bob: Any, mallory: Any, acme: Any, runner_configured: Any,
        rds: redis.Redis, gateway_queue: redis.Redis) -> None:
    design = make_evaluated(alice, acme, [calls_only("c0", "x"), calls_only("c1", "y")])
    evaluation = Evaluation.objects.get(pk=api.client_for(alice).post(
        evaluations_url(design), {}, format="json").json()["id"])
    one = f"/api/v1/agent-evaluations/{evaluation.pk}"
    review = f"{one}/cases/c0/review"
    viewer = api.client_for(bob)
    assert viewer.get(one).status_code == 200
    assert viewer.get(evaluations_url(design)).json()["evaluations"][0]["id"] == str(
        evaluation.pk)
    for response in (viewer.post(evaluations_url(design), {}, format="json"),
                     viewer.post(review, {"status": "accepted"}, format="json"),
                     viewer.post(f"{one}/cancel"),
                     viewer.put(f"/api/v1/agent-designs/{design.pk}/fixtures",
                                {"revision": 1, "cases": []}, format="json")):
        api.assert_error(response, 403, "forbidden")
    intruder = api.client_for(mallory)
    for response in (intruder.get(one), intruder.get(evaluations_url(design)),
                     intruder.post(evaluations_url(design), {}, format="json"),
                     intruder.post(review, {"status": "accepted"}, format="json"),
                     intruder.post(f"{one}/cancel")):
        api.assert_error(response, 404, "not_found")

    editor = api.client_for(alice)
    api.assert_error(editor.post(review, {"status": "accepted"}, format="json"), 409,
                     "case_not_finished")
    progress.advance(str(evaluation.pk))
    end_run(case_of(evaluation, "c0").run_id, output="Answer: x")
    settle_all(evaluation)
    api.assert_error(editor.post(f"{one}/cases/zz/review", {"status": "accepted"},
                                 format="json"), 404, "not_found")
    api.assert_error(editor.post(review, {"status": "fine"}, format="json"), 400,
                     "invalid_request")
    reviewed = editor.post(review, {"status": "needs_changes", "note": "Too terse."},
                           format="json")
    assert reviewed.status_code == 200, reviewed.content
    assert reviewed.json()["review"]["status"] == "needs_changes"
    got = viewer.get(one).json()
    assert got["reviews"] == {"needs_changes": 1}
    assert (got["progress"]["done"], got["progress"]["total"], got["status"]) == (
        1, 2, "running")
    audit = AuditEvent.objects.get(action="evaluation.case_reviewed")
    assert audit.actor == alice and audit.details["note"] == "Too terse."


def test_it_shows_evaluations_to_ops_staff_read_only(staff: Any, alice: Any, acme: Any,
                                                    runner_configured: Any,
                                                    gateway_queue: redis.Redis) -> None:
    design = make_evaluated(alice, acme, [calls_only("c0", "x")])
    evaluation = Evaluation.objects.create(
        project=acme, design=design, revision=1, content_sha256="a" * 64,
        judge_backend="mock", judge_model="llm", rubric_version="kionga-rubric-1")
    evaluation.cases.create(position=0, case_id="c0", name="Refund case",
                            case=calls_only("c0", "x"), status="failed",
                            reason="expected calls did not complete: answer",
                            judge_scores={"relevance": 0.4}, review_status="rejected")
    page = staff.get(f"/admin/evaluations/evaluation/{evaluation.pk}/change/")
    text = page.content.decode()
    assert page.status_code == 200
    assert "Refund case" in text and "expected calls did not complete" in text
    assert "relevance" in text and "rejected" in text
    assert staff.get("/admin/evaluations/evaluation/").status_code == 200
    assert staff.get("/admin/evaluations/evaluation/add/").status_code == 403
    assert staff.post(f"/admin/evaluations/evaluation/{evaluation.pk}/delete/").status_code \
        == 403
