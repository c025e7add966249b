"""A test case says how its approvals resolve (`approvals`: "approve", "reject", or per
node), "approve" by default; anything else is 400 invalid_request naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from designs.actions import do_create_design
from evaluations.fixtures import scripted_approvals
from evaluations.models import Fixtures
from runner.request import ScriptedApprovals
from tests.approvals_helpers import gated_graph
from tests.conftest import Api
from tests.fixtures_helpers import case, fixtures_url

pytestmark = pytest.mark.django_db


def put(api: Api, user: Any, design: Any, *cases: dict[str, Any]) -> Any:
    return api.client_for(user).put(fixtures_url(design), {"revision": 0, "cases": list(cases)},
                                    format="json")


def test_cases_store_their_approvals_approving_by_default(api: Api, alice: Any, carol: Any,
                                                          acme: Any) -> None:
    design = do_create_design(alice, acme, "Gated", "", gated_graph("60"))
    response = put(api, carol, design, case("Default"), case("All no", approvals="reject"),
                   case("Per node", approvals={"gate": "reject"}))
    assert response.status_code == 200, response.content
    stored = [c["approvals"] for c in response.json()["cases"]]
    assert stored == ["approve", "reject", {"gate": "reject"}]
    assert [scripted_approvals(c) for c in response.json()["cases"]] == [
        ScriptedApprovals("approve"), ScriptedApprovals("reject"),
        ScriptedApprovals("approve", {"gate": "reject"})]
    # A case stored before cases had approvals approves them all.
    assert scripted_approvals({"name": "old", "input": ""}) == ScriptedApprovals("approve")


@pytest.mark.parametrize(("approvals", "path", "message"), [
    ("maybe", "cases.0.approvals", 'Must be "approve" or "reject", or an object'),
    (True, "cases.0.approvals", 'Must be "approve" or "reject", or an object'),
    (["approve"], "cases.0.approvals", 'Must be "approve" or "reject", or an object'),
    ({"gate": "yes"}, "cases.0.approvals.gate", 'Must be "approve" or "reject".'),
    ({"gate": None}, "cases.0.approvals.gate", 'Must be "approve" or "reject".'),
    ({"ghost": "approve", "sent": "reject"}, "cases.0.approvals",
     "Not approval, subflow, map or loop nodes of the design's saved graph: ghost, sent."),
])
def test_an_unknown_value_is_a_clear_400(api: Api, alice: Any, carol: Any, acme: Any,
                                         approvals: Any, path: str, message: str) -> None:
    design = do_create_design(alice, acme, "Gated", "", gated_graph("60"))
    response = put(api, carol, design, case(approvals=approvals))
    error = api.assert_error(response, 400, "invalid_request")
    [found] = error["details"]["fields"][path]
    assert found.startswith(message), found
    assert not Fixtures.objects.filter(design=design).exists()
