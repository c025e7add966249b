"""Starting a run: checks, the stored run, its credential, the slot and the signed task."""

from typing import Any

import pytest
import redis

from contracts.hashing import canonical_json
from kionga.models import AuditEvent
from kionga.resource_models import ModelEndpoint
from kionga.tokens import hash_token
from runner import protocol, task_signature
from runner.task_seal import unseal
from runs.models import Run
from tests.conftest import Api
from tests.designs_helpers import assistant_graph, make_design
from tests.runs_helpers import RUNNER_TOKEN, queued_texts, start_url

# Real commits: a run is dispatched only when its transaction commits.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.allow_output  # Django logs every 5xx answer, as it should.
def test_it_refuses_when_the_runner_is_not_configured(api: Api, alice: Any, acme: Any,
                                                     settings: Any) -> None:
    settings.KIONGA_AGENT_DESIGNER_RUNNER_URL = ""
    design = make_design(alice, acme)
    response = api.client_for(alice).post(start_url(design), {"input": "hi"}, format="json")
    api.assert_error(response, 503, "runner_not_configured")
    assert Run.objects.count() == 0


def test_it_starts_a_queued_run(api: Api, alice: Any, acme: Any, runner_configured: Any,
                                rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    response = api.client_for(alice).post(start_url(design), {"input": "hello"}, format="json")
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["status"] == "queued" and data["input"] == "hello" and data["revision"] == 1
    run = Run.objects.get(pk=data["id"])
    assert protocol.slot_alive(rds, data["id"])
    assert AuditEvent.objects.filter(action="run.started", target_id=data["id"]).exists()
    [(text, signature)] = queued_texts(rds)
    # The payload travels as its canonical JSON, signed as sent.
    payload = task_signature.opened(text, signature, RUNNER_TOKEN)
    assert payload is not None and canonical_json(payload) == text
    assert payload["run_id"] == data["id"] and payload["input"] == "hello"
    credential = unseal(payload["sealed"], RUNNER_TOKEN, data["id"])["credential"]
    assert run.credential.token_hash == hash_token(credential)


def test_it_never_puts_resource_secrets_in_the_task(api: Api, alice: Any, acme: Any,
                                                    runner_configured: Any,
                                                    rds: redis.Redis) -> None:
    ModelEndpoint.objects.create(project=acme, key="gpt", base_url="http://m.test/v1",
                                 model_name="m", secret="sk-top-secret-model-key")
    graph = assistant_graph()
    graph["nodes"][2]["config"]["model"] = "gpt"
    design = make_design(alice, acme)
    api.client_for(alice).put(f"/api/v1/agent-designs/{design.pk}",
                              {"revision": 1, "graph": graph}, format="json")
    response = api.client_for(alice).post(start_url(design), {"input": "x"}, format="json")
    assert response.status_code == 201
    raw = str(rds.lrange(protocol.QUEUE, 0, -1))
    assert "sk-top-secret-model-key" not in raw and "sk-top-secret" not in str(response.json())


def test_it_refuses_a_graph_with_errors(api: Api, alice: Any, acme: Any,
                                        runner_configured: Any, rds: redis.Redis) -> None:
    graph = assistant_graph()
    graph["nodes"][1]["config"] = {}
    design = make_design(alice, acme)
    api.client_for(alice).put(f"/api/v1/agent-designs/{design.pk}",
                              {"revision": 1, "graph": graph}, format="json")
    response = api.client_for(alice).post(start_url(design), {"input": "x"}, format="json")
    error = api.assert_error(response, 422, "validation_failed")
    assert "missing_required_config" in {i["code"] for i in error["details"]["issues"]}
    assert rds.zcard(protocol.SLOTS_KEY) == 0


def test_it_checks_the_body(api: Api, alice: Any, acme: Any, runner_configured: Any,
                            rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    client = api.client_for(alice)
    for body, fields in (({"input": 5}, ["input"]), ({"allow_side_effects": "yes"},
                                                      ["allow_side_effects"]),
                         ({"history": [{"role": "x"}]}, ["history.0.role", "history.0.content"]),
                         ({"stop_after": "nope"}, ["stop_after"]), ({"revision": 0}, ["revision"]),
                         ({"session_id": "s" * 201}, ["session_id"]), ([1], ["non_field_errors"])):
        error = api.assert_error(client.post(start_url(design), body, format="json"), 400,
                                 "invalid_request")
        assert list(error["details"]["fields"]) == fields, error
    api.assert_error(client.post(start_url(design), {"revision": 9}, format="json"), 404,
                     "not_found")
    assert Run.objects.count() == 0 and rds.zcard(protocol.SLOTS_KEY) == 0


def test_it_refuses_viewers_and_hides_other_tenants(api: Api, alice: Any, bob: Any,
                                                    mallory: Any, acme: Any,
                                                    runner_configured: Any,
                                                    rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    api.assert_error(api.client_for(bob).post(start_url(design), {}, format="json"), 403,
                     "forbidden")
    api.assert_error(api.client_for(mallory).post(start_url(design), {}, format="json"), 404,
                     "not_found")
    api.assert_error(api.client_for(mallory).get(start_url(design)), 404, "not_found")
