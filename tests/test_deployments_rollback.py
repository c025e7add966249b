"""POST agents/{id}/rollback against a loopback Kubernetes API (tests/k8s_peer.py): the
agent back on the version it ran before, with that rollout's settings, after its stored
artifact is checked against the hash recorded at publish; 409 when there is nothing to
roll back to or the artifact was changed; editors only; audited; the local runtime
gets the earlier artifact too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User

from deployments.models import Agent, Rollout
from designs.models import Version
from kionga.models import AuditEvent, Project
from tests.deploy_helpers import deploy_url
from tests.k8s_peer import Peer
from tests.versions_helpers import flow_graph, prompt_graph, publish, published, save

SMALL = {"autoscaling": {"min_replicas": 1, "max_replicas": 2, "target_cpu_percent": 50}}


def rollback_url(agent_id: Any) -> str:
    return f"/api/v1/agents/{agent_id}/rollback"


def two_versions(api: Any, carol: User, acme: Project) -> tuple[Version, Version, str]:
    """v1 deployed with SMALL, then v2 deployed with the defaults: the agent's id."""
    v1 = published(carol, acme, prompt_graph("one {input}"))
    client = api.client_for(carol)
    agent = client.post(deploy_url(v1.pk), SMALL, format="json").json()
    save(carol, v1.design, prompt_graph("two {input}"))
    v2 = publish(carol, v1.design)
    assert client.post(deploy_url(v2.pk), {}, format="json").status_code == 200
    return v1, v2, agent["id"]


def pod_hash(cluster: Peer) -> str:
    pod = cluster.applied("Deployment")[0]["spec"]["template"]["metadata"]["annotations"]
    return str(pod["kionga.dev/content-sha256"])


def test_it_rolls_back_to_the_previous_version_and_its_settings(
        api: Any, carol: User, acme: Project, cluster: Peer) -> None:
    v1, v2, agent_id = two_versions(api, carol, acme)
    assert pod_hash(cluster) == v2.content_sha256
    response = api.client_for(carol).post(rollback_url(agent_id))
    assert response.status_code == 200, response.content
    agent = response.json()
    assert agent["version_id"] == str(v1.pk) and agent["version"] == 1
    assert agent["settings"]["autoscaling"] == SMALL["autoscaling"]
    assert [(r["version"], r["action"]) for r in agent["rollouts"]] == [
        (1, "rollback"), (2, "deploy"), (1, "deploy")]
    assert agent["rollouts"][0]["content_sha256"] == v1.content_sha256
    assert pod_hash(cluster) == v1.content_sha256
    hpa = cluster.applied("HorizontalPodAutoscaler")[0]["spec"]
    assert hpa["maxReplicas"] == 2
    event = AuditEvent.objects.get(action="agent.rolled_back", target_id=agent_id)
    assert event.details["version"] == 1
    assert event.details["content_sha256"] == v1.content_sha256
    # Rolling back again returns to the version it ran before: v2.
    again = api.client_for(carol).post(rollback_url(agent_id)).json()
    assert again["version"] == 2 and pod_hash(cluster) == v2.content_sha256


def test_an_agent_with_one_version_has_nothing_to_roll_back_to(
        api: Any, carol: User, acme: Project, cluster: Peer) -> None:
    version = published(carol, acme, prompt_graph())
    client = api.client_for(carol)
    agent = client.post(deploy_url(version.pk), {}, format="json").json()
    # Deploying the same version again is not an earlier version.
    assert client.post(deploy_url(version.pk), {}, format="json").status_code == 200
    applied = len(cluster.requests)
    body = api.assert_error(client.post(rollback_url(agent["id"])), 409,
                            "no_previous_version")
    assert body["details"]["version"] == 1
    assert len(cluster.requests) == applied
    assert Rollout.objects.filter(agent_id=agent["id"]).count() == 2


def test_a_changed_artifact_is_not_rolled_back_to(
        api: Any, carol: User, acme: Project, cluster: Peer) -> None:
    v1, v2, agent_id = two_versions(api, carol, acme)
    artifact = dict(v1.artifact)
    artifact["graph"] = prompt_graph("tampered {input}")
    Version.objects.filter(pk=v1.pk).update(artifact=artifact)
    applied = len(cluster.requests)
    body = api.assert_error(api.client_for(carol).post(rollback_url(agent_id)), 409,
                            "hash_mismatch")
    assert body["details"]["content_sha256"] == v1.content_sha256
    assert Agent.objects.get(pk=agent_id).version_id == v2.pk
    assert len(cluster.requests) == applied
    assert not AuditEvent.objects.filter(action="agent.rolled_back").exists()


def test_a_changed_nested_version_is_not_rolled_back_to(
        api: Any, carol: User, acme: Project, cluster: Peer) -> None:
    inner = published(carol, acme, prompt_graph("inner {input}"), name="Inner")
    v1 = published(carol, acme, flow_graph("subflow", str(inner.pk)), name="Outer")
    client = api.client_for(carol)
    agent = client.post(deploy_url(v1.pk), {}, format="json").json()
    save(carol, v1.design, prompt_graph("two {input}"))
    v2 = publish(carol, v1.design)
    assert client.post(deploy_url(v2.pk), {}, format="json").status_code == 200
    artifact = dict(v1.artifact)
    assert [s["version_id"] for s in artifact["subflows"]] == [str(inner.pk)]
    artifact["subflows"] = [{**artifact["subflows"][0],
                             "graph": prompt_graph("tampered {input}")}]
    Version.objects.filter(pk=v1.pk).update(artifact=artifact)
    api.assert_error(client.post(rollback_url(agent["id"])), 409, "hash_mismatch")
    Version.objects.filter(pk=v1.pk).update(artifact={**artifact, "subflows": ["x"]})
    api.assert_error(client.post(rollback_url(agent["id"])), 409, "hash_mismatch")
    assert Agent.objects.get(pk=agent["id"]).version_id == v2.pk


def test_it_refuses_viewers_and_hides_other_tenants(
        api: Any, carol: User, bob: User, mallory: User, acme: Project,
        cluster: Peer) -> None:
    v1, v2, agent_id = two_versions(api, carol, acme)
    api.assert_error(api.client_for(bob).post(rollback_url(agent_id)), 403, "forbidden")
    api.assert_error(api.client_for(mallory).post(rollback_url(agent_id)), 404, "not_found")
    assert Agent.objects.get(pk=agent_id).version_id == v2.pk


def test_it_rolls_back_on_the_local_runtime(api: Any, carol: User, acme: Project,
                                            settings: Any, tmp_path: Path) -> None:
    settings.KIONGA_NATIVE_AGENT_IMAGE, settings.KIONGA_LOCAL_AGENTS_DIR = "", str(tmp_path)
    v1, v2, agent_id = two_versions(api, carol, acme)
    folder = tmp_path / Agent.objects.get(pk=agent_id).name
    assert json.loads((folder / "artifact.json").read_text()) == v2.artifact
    credential, port = (folder / "credential").read_text(), (folder / "port").read_text()
    response = api.client_for(carol).post(rollback_url(agent_id))
    assert response.status_code == 200, response.content
    assert json.loads((folder / "artifact.json").read_text()) == v1.artifact
    assert (folder / "credential").read_text() == credential
    assert (folder / "port").read_text() == port
