"""A canary through the API against a loopback Kubernetes API (tests/k8s_peer.py): a
deploy with canary_percent keeps the agent's version and adds the canary (both artifacts
in the ConfigMap, the pods told where the canary is); promote makes it the version;
rollback ends it and keeps the version; each a rollout, audited; stable refusals; viewers
and other projects' people change nothing."""

from __future__ import annotations

import json
from typing import Any

import kubernetes_validate
import pytest
from django.contrib.auth.models import User

from deployments.models import Agent
from designs.models import Version
from kionga.models import AuditEvent, Project
from tests.deploy_helpers import deploy_url
from tests.k8s_peer import Peer
from tests.test_deployments_objects import K8S_VERSION
from tests.versions_helpers import prompt_graph, publish, published, save

SMALL = {"autoscaling": {"min_replicas": 1, "max_replicas": 2, "target_cpu_percent": 50}}


def promote_url(agent_id: Any) -> str:
    return f"/api/v1/agents/{agent_id}/promote"


def rollback_url(agent_id: Any) -> str:
    return f"/api/v1/agents/{agent_id}/rollback"


def running_with_next(api: Any, alice: User, acme: Project) -> tuple[Version, Version, str]:
    """v1 deployed (SMALL), v2 published and not deployed: the agent's id."""
    v1 = published(alice, acme, prompt_graph("one {input}"))
    agent = api.client_for(alice).post(deploy_url(v1.pk), SMALL, format="json").json()
    save(alice, v1.design, prompt_graph("two {input}"))
    return v1, publish(alice, v1.design), agent["id"]


def canary_file(cluster: Peer) -> dict[str, Any] | None:
    data = cluster.applied("ConfigMap")[0]["data"]
    return json.loads(data["canary.json"]) if "canary.json" in data else None


def pod(cluster: Peer) -> dict[str, Any]:
    return dict(cluster.applied("Deployment")[0]["spec"]["template"])


def test_a_canary_deploy_keeps_the_version_and_adds_the_canary(
        api: Any, alice: User, acme: Project, cluster: Peer) -> None:
    v1, v2, agent_id = running_with_next(api, alice, acme)
    response = api.client_for(alice).post(deploy_url(v2.pk), {**SMALL, "canary_percent": 10},
                                          format="json")
    assert response.status_code == 200, response.content
    agent = response.json()
    assert (agent["id"], agent["version_id"]) == (agent_id, str(v1.pk))
    assert agent["canary"] == {"version_id": str(v2.pk), "version": 2,
                               "content_sha256": v2.content_sha256, "percent": 10}
    assert [(r["version"], r["action"], r["canary_percent"]) for r in agent["rollouts"]] == [
        (2, "canary", 10), (1, "deploy", None)]
    # Both artifacts go to the runtime, which verifies both at start-up.
    assert json.loads(cluster.applied("ConfigMap")[0]["data"]["artifact.json"])[
        "content_sha256"] == v1.content_sha256
    assert canary_file(cluster) == {"percent": 10, "artifact": v2.artifact}
    env = {e["name"]: e.get("value") for e in pod(cluster)["spec"]["containers"][0]["env"]}
    assert env["KIONGA_AGENT_CANARY"] == "/etc/kionga/canary.json"
    annotations = pod(cluster)["metadata"]["annotations"]
    assert annotations["kionga.dev/canary-version-id"] == str(v2.pk)
    assert annotations["kionga.dev/canary-percent"] == "10"
    for manifest in cluster.objects.values():
        kubernetes_validate.validate(manifest, K8S_VERSION, strict=True)
    listed = api.client_for(alice).get(
        f"/api/v1/agent-designs/{v1.design_id}/versions").json()["versions"]
    where = {v["number"]: [(d["current"], d["canary"]) for d in v["deployments"]]
             for v in listed}
    assert where == {2: [(False, True)], 1: [(True, False)]}
    event = AuditEvent.objects.get(action="agent.canary_started", target_id=agent_id)
    assert event.details["canary_percent"] == 10 and event.details["version"] == 2
    assert event.actor == alice

    # A canary deploy while one runs changes it (here: its share).
    again = api.client_for(alice).post(deploy_url(v2.pk), {**SMALL, "canary_percent": 50},
                                       format="json").json()
    assert again["canary"]["percent"] == 50
    assert canary_file(cluster) == {"percent": 50, "artifact": v2.artifact}


def test_promote_makes_the_canary_the_version(api: Any, alice: User, acme: Project,
                                              cluster: Peer) -> None:
    v1, v2, agent_id = running_with_next(api, alice, acme)
    api.client_for(alice).post(deploy_url(v2.pk), {**SMALL, "canary_percent": 20},
                               format="json")
    response = api.client_for(alice).post(promote_url(agent_id))
    assert response.status_code == 200, response.content
    agent = response.json()
    assert (agent["version_id"], agent["canary"]) == (str(v2.pk), None)
    assert agent["settings"]["autoscaling"] == SMALL["autoscaling"]
    assert [(r["version"], r["action"]) for r in agent["rollouts"]][:2] == [
        (2, "promote"), (2, "canary")]
    assert canary_file(cluster) is None
    env = {e["name"] for e in pod(cluster)["spec"]["containers"][0]["env"]}
    assert "KIONGA_AGENT_CANARY" not in env
    annotations = pod(cluster)["metadata"]["annotations"]
    assert annotations["kionga.dev/content-sha256"] == v2.content_sha256
    assert AuditEvent.objects.filter(action="agent.canary_promoted", target_id=agent_id,
                                     actor=alice).count() == 1
    # No canary now: promote is refused, and a rollback goes back to v1 (the version it ran).
    refused = api.client_for(alice).post(promote_url(agent_id))
    assert (refused.status_code, refused.json()["error"]["code"]) == (409, "no_canary")
    back = api.client_for(alice).post(rollback_url(agent_id)).json()
    assert back["version_id"] == str(v1.pk)


def test_rollback_during_a_canary_ends_it_and_keeps_the_version(
        api: Any, alice: User, acme: Project, cluster: Peer) -> None:
    v1, v2, agent_id = running_with_next(api, alice, acme)
    api.client_for(alice).post(deploy_url(v2.pk), {**SMALL, "canary_percent": 30},
                               format="json")
    response = api.client_for(alice).post(rollback_url(agent_id))
    assert response.status_code == 200, response.content
    agent = response.json()
    assert (agent["version_id"], agent["canary"]) == (str(v1.pk), None)
    assert [(r["version"], r["action"]) for r in agent["rollouts"]] == [
        (1, "rollback"), (2, "canary"), (1, "deploy")]
    assert canary_file(cluster) is None
    assert AuditEvent.objects.filter(action="agent.rolled_back", target_id=agent_id).count() == 1
    listed = api.client_for(alice).get(
        f"/api/v1/agent-designs/{v1.design_id}/versions").json()["versions"]
    assert {v["number"]: len(v["deployments"]) for v in listed} == {2: 0, 1: 1}
    # The canary's version never was the agent's: there is nothing earlier to go back to.
    again = api.client_for(alice).post(rollback_url(agent_id))
    assert (again.status_code, again.json()["error"]["code"]) == (409, "no_previous_version")


@pytest.mark.parametrize("percent", [0, 100, -5, 1000])
def test_a_share_outside_1_to_99_is_422(api: Any, alice: User, acme: Project, cluster: Peer,
                                        percent: int) -> None:
    v1, v2, agent_id = running_with_next(api, alice, acme)
    response = api.client_for(alice).post(deploy_url(v2.pk), {"canary_percent": percent},
                                          format="json")
    assert response.status_code == 422, response.content
    assert response.json()["error"]["code"] == "invalid_canary_percent"
    agent = Agent.objects.get(pk=agent_id)
    assert (agent.version_id, agent.canary_version_id) == (v1.pk, None)


def test_refusals_have_stable_codes(api: Any, alice: User, acme: Project,
                                    cluster: Peer) -> None:
    v1, v2, agent_id = running_with_next(api, alice, acme)
    client = api.client_for(alice)
    not_a_number = client.post(deploy_url(v2.pk), {"canary_percent": "10"}, format="json")
    assert (not_a_number.status_code, not_a_number.json()["error"]["code"]) == (
        400, "invalid_request")
    same = client.post(deploy_url(v1.pk), {"canary_percent": 10}, format="json")
    assert (same.status_code, same.json()["error"]["code"]) == (409, "canary_same_version")
    none = client.post(promote_url(agent_id))
    assert (none.status_code, none.json()["error"]["code"]) == (409, "no_canary")
    other = published(alice, acme, prompt_graph("alone {input}"), name="Never deployed")
    lonely = client.post(deploy_url(other.pk), {"canary_percent": 10}, format="json")
    assert (lonely.status_code, lonely.json()["error"]["code"]) == (409, "no_agent")
    assert not Agent.objects.filter(design=other.design).exists()


def test_viewers_and_other_projects_change_nothing(api: Any, alice: User, bob: User,
                                                   mallory: User, acme: Project,
                                                   cluster: Peer) -> None:
    v1, v2, agent_id = running_with_next(api, alice, acme)
    viewer = api.client_for(bob)
    assert viewer.post(deploy_url(v2.pk), {"canary_percent": 10},
                       format="json").status_code == 403
    api.client_for(alice).post(deploy_url(v2.pk), {"canary_percent": 10}, format="json")
    assert viewer.post(promote_url(agent_id)).status_code == 403
    assert viewer.get(f"/api/v1/agents/{agent_id}").json()["canary"]["version"] == 2
    outsider = api.client_for(mallory)
    for response in (outsider.post(promote_url(agent_id)),
                     outsider.post(rollback_url(agent_id)),
                     outsider.post(deploy_url(v2.pk), {"canary_percent": 10}, format="json"),
                     outsider.get(f"/api/v1/agents/{agent_id}/operations")):
        assert response.status_code == 404, response.content
    agent = Agent.objects.get(pk=agent_id)
    assert (agent.version_id, agent.canary_version_id, agent.canary_percent) == (
        v1.pk, v2.pk, 10)
