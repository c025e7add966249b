"""Publishing with a quality gate: without a passing evaluation, a gated publish is 409
(the evaluations side is in tests/test_evaluations_gate.py)."""

from typing import Any

from designs.models import Version
from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.versions_helpers import publish_url


def test_it_refuses_a_design_that_requires_an_evaluation(api: Api, alice: Any,
                                                         acme: Any) -> None:
    design = make_design(alice, acme)
    design.require_evaluation = True
    design.save()
    response = api.client_for(alice).post(publish_url(design), {"revision": 1}, format="json")
    error = api.assert_error(response, 409, "quality_gate")
    assert "evaluation" in error["message"]
    assert Version.objects.count() == 0


def test_it_refuses_an_evaluation_id_that_names_no_evaluation(api: Api, alice: Any,
                                                              acme: Any) -> None:
    design = make_design(alice, acme)
    response = api.client_for(alice).post(
        publish_url(design), {"revision": 1, "evaluation_id": "e-1"}, format="json")
    api.assert_error(response, 409, "quality_gate")
    assert Version.objects.count() == 0


def test_it_publishes_without_a_gate(api: Api, alice: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    response = api.client_for(alice).post(
        publish_url(design), {"revision": 1, "evaluation_id": None}, format="json")
    assert response.status_code == 201
