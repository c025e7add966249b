"""POST agent-versions/{id}/deploy against a loopback Kubernetes API (tests/k8s_peer.py):
server-side apply of every object, roll forward, rollout history, the versions list."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from deployments.models import Agent, AgentCredential, Rollout
from kionga.models import AuditEvent, Project
from tests.deploy_helpers import IMAGE, deploy_url
from tests.k8s_peer import Peer
from tests.versions_helpers import prompt_graph, publish, published, save

KINDS = ["ConfigMap", "Secret", "Deployment", "Service", "HorizontalPodAutoscaler",
         "NetworkPolicy"]


def test_it_deploys_a_version_with_server_side_apply(api: Any, carol: User, acme: Project,
                                                     cluster: Peer) -> None:
    version = published(carol, acme, prompt_graph())
    body = {"autoscaling": {"min_replicas": 2, "max_replicas": 5, "target_cpu_percent": 60},
            "resources": {"requests": {"cpu": "250m", "memory": "256Mi"},
                          "limits": {"cpu": "1", "memory": "512Mi"}}}
    response = api.client_for(carol).post(deploy_url(version.pk), body, format="json")
    assert response.status_code == 201, response.content
    agent = response.json()
    assert agent["version_id"] == str(version.pk) and agent["version"] == 1
    assert agent["settings"]["autoscaling"] == body["autoscaling"]
    assert [r["deployed_by"] for r in agent["rollouts"]] == ["carol"]
    assert [r["body"]["kind"] for r in cluster.requests] == KINDS
    for request in cluster.requests:
        assert request["content_type"] == "application/apply-patch+yaml"
        # The client spells it True; the apiserver parses it as Go booleans (true).
        assert request["query"] == {"fieldManager": ["kionga"], "force": ["True"]}
        assert request["path"].split("/namespaces/")[1].startswith("kionga-agents/")
    deployment = cluster.applied("Deployment")[0]
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == IMAGE
    hpa = cluster.applied("HorizontalPodAutoscaler")[0]["spec"]
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (2, 5)
    # The credential reaches the pod in its Secret; the gateway keeps only the hash.
    raw = cluster.applied("Secret")[0]["stringData"]["credential"]
    assert raw.startswith("kag_")
    assert AgentCredential.objects.get(agent_id=agent["id"]).token_hash != raw
    assert AuditEvent.objects.filter(action="agent.deployed", target_id=agent["id"]).exists()


def test_it_rolls_forward_and_lists_where_versions_are_deployed(
        api: Any, carol: User, alice: User, acme: Project, cluster: Peer) -> None:
    v1 = published(carol, acme, prompt_graph("one {input}"))
    client = api.client_for(carol)
    first = client.post(deploy_url(v1.pk), {}, format="json").json()
    save(carol, v1.design, prompt_graph("two {input}"))
    v2 = publish(carol, v1.design)
    response = api.client_for(alice).post(deploy_url(v2.pk), {}, format="json")
    assert response.status_code == 200, response.content
    agent = response.json()
    assert agent["id"] == first["id"] and agent["version"] == 2
    assert [(r["version"], r["deployed_by"]) for r in agent["rollouts"]] == [(2, "alice"),
                                                                               (1, "carol")]
    # Only the first deploy issues (and applies) a credential.
    assert [r["body"]["kind"] for r in cluster.requests].count("Secret") == 1
    pod = cluster.applied("Deployment")[0]["spec"]["template"]["metadata"]["annotations"]
    assert pod["kionga.dev/content-sha256"] == v2.content_sha256
    listed = client.get(f"/api/v1/agent-designs/{v1.design_id}/versions").json()["versions"]
    where = {v["number"]: v["deployments"] for v in listed}
    assert [d["current"] for d in where[2]] == [True]
    assert [d["current"] for d in where[1]] == [False]
    assert where[2][0]["agent_id"] == agent["id"]
    assert client.get(f"/api/v1/agents/{agent['id']}").json()["version"] == 2


def test_it_reapplies_the_same_objects_idempotently(api: Any, carol: User, acme: Project,
                                                    cluster: Peer) -> None:
    version = published(carol, acme, prompt_graph())
    client = api.client_for(carol)
    assert client.post(deploy_url(version.pk), {}, format="json").status_code == 201
    before = {k: o["metadata"]["resourceVersion"] for k, o in cluster.objects.items()}
    assert client.post(deploy_url(version.pk), {}, format="json").status_code == 200
    after = {k: o["metadata"]["resourceVersion"] for k, o in cluster.objects.items()}
    assert after == before  # nothing changed in the cluster
    assert Rollout.objects.filter(agent__design=version.design).count() == 2


@pytest.mark.allow_output  # the refusal is logged
def test_it_keeps_nothing_when_the_cluster_refuses_an_object(
        api: Any, carol: User, acme: Project, cluster: Peer, caplog: Any) -> None:
    version = published(carol, acme, prompt_graph())
    cluster.refuse.add("HorizontalPodAutoscaler")
    response = api.client_for(carol).post(deploy_url(version.pk), {}, format="json")
    error = api.assert_error(response, 503, "runtime_not_configured")
    assert "HorizontalPodAutoscaler" in error["message"]
    assert not Agent.objects.exists() and not Rollout.objects.exists()
    assert not AgentCredential.objects.exists()
    assert "apply of HorizontalPodAutoscaler" in caplog.text  # logged, with why


def test_it_refuses_viewers_and_hides_other_tenants(api: Any, bob: User, mallory: User,
                                                    carol: User, acme: Project,
                                                    cluster: Peer) -> None:
    version = published(carol, acme, prompt_graph())
    api.assert_error(api.client_for(bob).post(deploy_url(version.pk), {}, format="json"),
                     403, "forbidden")
    api.assert_error(api.client_for(mallory).post(deploy_url(version.pk), {}, format="json"),
                     404, "not_found")
    assert cluster.requests == [] and not Agent.objects.exists()


def test_it_checks_the_body(api: Any, carol: User, acme: Project, cluster: Peer) -> None:
    version = published(carol, acme, prompt_graph())
    client = api.client_for(carol)
    for body, field in [({"autoscaling": {"min_replicas": 4, "max_replicas": 2}},
                         "autoscaling.max_replicas"),
                        ({"resources": {"limits": {"cpu": "lots", "memory": "1Gi"}}},
                         "resources.limits.cpu"),
                        ({"require_evaluation": "yes"}, "require_evaluation")]:
        error = api.assert_error(client.post(deploy_url(version.pk), body, format="json"),
                                 400, "invalid_request")
        assert field in error["details"]["fields"], error
