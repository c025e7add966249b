"""POST …/fixtures/cases and PUT/DELETE …/fixtures/cases/{case_id}: one test case at a
time (and a run saved as one), closed bodies, editors only, other tenants 404."""

from __future__ import annotations

from typing import Any

from evaluations.serializers import MAX_CASES
from runs.models import Run
from tests.conftest import Api
from tests.fixtures_helpers import case, fixtures_url, make_triage


def cases_url(design: Any, case_id: str | None = None) -> str:
    return fixtures_url(design) + "/cases" + (f"/{case_id}" if case_id else "")


def test_add_update_delete_one_case(api: Api, alice: Any, carol: Any, acme: Any) -> None:
    design = make_triage(alice, acme)
    client = api.client_for(carol)
    added = client.post(cases_url(design), case("One", tags=["a"]), format="json")
    assert added.status_code == 201, added.content
    body = added.json()
    assert body["revision"] == 1 and body["design_id"] == str(design.pk)
    case_id = body["case"]["id"]
    assert body["case"]["tags"] == ["a"] and body["case"]["expected"] == {"calls": []}
    second = client.post(cases_url(design), case("Two"), format="json").json()
    assert second["revision"] == 2

    updated = client.put(cases_url(design, case_id), case(
        "One again", input="changed", expected={"calls": ["is-refund"]}), format="json")
    assert updated.status_code == 200, updated.content
    assert updated.json()["case"]["id"] == case_id
    assert updated.json()["revision"] == 3
    stored = client.get(fixtures_url(design)).json()
    assert [c["name"] for c in stored["cases"]] == ["One again", "Two"]  # position kept
    assert stored["cases"][0]["input"] == "changed"

    deleted = client.delete(cases_url(design, case_id))
    assert deleted.status_code == 200, deleted.content
    assert deleted.json() == {"design_id": str(design.pk), "revision": 4, "deleted": case_id}
    assert [c["name"] for c in client.get(fixtures_url(design)).json()["cases"]] == ["Two"]
    api.assert_error(client.delete(cases_url(design, case_id)), 404, "not_found")
    api.assert_error(client.put(cases_url(design, case_id), case(), format="json"),
                     404, "not_found")


def test_a_case_is_checked_as_a_put_checks_it(api: Api, alice: Any, acme: Any) -> None:
    design = make_triage(alice, acme)
    client = api.client_for(alice)
    first = client.post(cases_url(design), case("Same"), format="json").json()["case"]
    api.assert_error(client.post(cases_url(design), case("Same"), format="json"),
                     400, "invalid_request")
    wrong = client.post(cases_url(design), case("Calls", expected={"calls": ["nope"]}),
                        format="json")
    assert "nope" in api.assert_error(wrong, 400, "invalid_request")["message"]
    unknown = client.post(cases_url(design), {**case("Extra"), "gpu": 1}, format="json")
    assert "gpu" in api.assert_error(unknown, 400, "invalid_request")["details"]["fields"]
    no_input = client.post(cases_url(design), {"name": "No input"}, format="json")
    api.assert_error(no_input, 400, "invalid_request")
    renamed = client.put(cases_url(design, first["id"]), case("Same", id="other"),
                         format="json")
    api.assert_error(renamed, 400, "invalid_request")
    assert client.get(fixtures_url(design)).json()["revision"] == 1


def test_a_put_of_all_cases_read_before_a_one_case_change_is_stale(
        api: Api, alice: Any, acme: Any) -> None:
    design = make_triage(alice, acme)
    client = api.client_for(alice)
    assert client.put(fixtures_url(design), {"revision": 0, "cases": [case()]},
                      format="json").status_code == 200
    assert client.post(cases_url(design), case("More"), format="json").status_code == 201
    api.assert_error(client.put(fixtures_url(design), {"revision": 1, "cases": []},
                                format="json"), 409, "stale_revision")


def test_at_most_max_cases(api: Api, alice: Any, acme: Any) -> None:
    design = make_triage(alice, acme)
    client = api.client_for(alice)
    full = [case(f"c{i}") for i in range(MAX_CASES)]
    assert client.put(fixtures_url(design), {"revision": 0, "cases": full},
                      format="json").status_code == 200
    api.assert_error(client.post(cases_url(design), case("One more"), format="json"),
                     400, "invalid_request")


def _run(design: Any, output: str | None, status: str = "completed") -> Run:
    return Run.objects.create(project=design.project, design=design, revision=1,
                              content_sha256="0" * 64, input="Where is my parcel?",
                              output=output, status=status)


def test_save_a_run_as_a_case(api: Api, alice: Any, acme: Any) -> None:
    design = make_triage(alice, acme)
    client = api.client_for(alice)
    run = _run(design, "It ships tomorrow.")
    plain = client.post(cases_url(design), {"name": "From run", "from_run": str(run.pk)},
                        format="json")
    assert plain.status_code == 201, plain.content
    assert plain.json()["case"]["input"] == "Where is my parcel?"
    assert plain.json()["case"]["expected"] == {"calls": []}
    expected = client.post(cases_url(design), {"name": "With answer", "from_run": str(run.pk),
                                               "expect_output": True}, format="json")
    assert expected.status_code == 201, expected.content
    assert expected.json()["case"]["expected"]["judge"] == {
        "criteria": ["task_completion"], "reference": "It ships tomorrow.", "min_score": 0.7}
    failed = _run(design, None, "failed")
    no_output = client.post(cases_url(design), {"name": "Failed", "from_run": str(failed.pk),
                                                "expect_output": True}, format="json")
    assert "no output" in api.assert_error(no_output, 400, "invalid_request")["message"]
    api.assert_error(client.post(cases_url(design), {**case("X"), "expect_output": True},
                                 format="json"), 400, "invalid_request")


def test_a_run_of_another_design_is_404(api: Api, alice: Any, acme: Any, mallory: Any,
                                        evil: Any) -> None:
    design = make_triage(alice, acme)
    theirs = _run(make_triage(mallory, evil), "secret")
    other = _run(make_triage(alice, acme), "other design")
    answer = api.client_for(alice).post(cases_url(design), {"name": "Other",
                                                            "from_run": str(other.pk)},
                                        format="json")
    api.assert_error(answer, 404, "not_found")
    answer = api.client_for(alice).post(cases_url(design), {"name": "Theirs",
                                                            "from_run": str(theirs.pk)},
                                        format="json")
    api.assert_error(answer, 404, "not_found")


def test_a_viewer_gets_403_and_another_tenant_404(api: Api, alice: Any, bob: Any,
                                                  mallory: Any, acme: Any) -> None:
    design = make_triage(alice, acme)
    case_id = api.client_for(alice).post(cases_url(design), case(),
                                         format="json").json()["case"]["id"]
    for user, status, code in ((bob, 403, "forbidden"), (mallory, 404, "not_found")):
        client = api.client_for(user)
        api.assert_error(client.post(cases_url(design), case("B"), format="json"), status, code)
        api.assert_error(client.put(cases_url(design, case_id), case("B"), format="json"),
                         status, code)
        api.assert_error(client.delete(cases_url(design, case_id)), status, code)
    assert len(api.client_for(alice).get(fixtures_url(design)).json()["cases"]) == 1
