"""A deploy body past what one pod may be is refused at its path before anything is
created or applied: limits above the installation's pod ceiling (999,999 CPUs), requests
above limits, quantities Kubernetes would misread, and keys the deploy does not know."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from deployments.models import Agent
from kionga.models import Project
from tests.deploy_helpers import deploy_url
from tests.k8s_peer import Peer
from tests.versions_helpers import prompt_graph, published


def refused(api: Any, user: User, version_id: Any, body: dict[str, Any], path: str) -> str:
    """The message of the 400 invalid_request at `path` (nothing applied)."""
    response = api.client_for(user).post(deploy_url(version_id), body, format="json")
    error = api.assert_error(response, 400, "invalid_request")
    assert path in error["details"]["fields"], error
    return str(error["details"]["fields"][path][0])


def resources(requests: dict[str, str], limits: dict[str, str]) -> dict[str, Any]:
    return {"resources": {"requests": requests, "limits": limits}}


def test_it_refuses_limits_above_the_pod_ceiling(api: Any, carol: User, acme: Project,
                                                 cluster: Peer) -> None:
    version = published(carol, acme, prompt_graph())
    message = refused(api, carol, version.pk, resources(
        {"cpu": "1", "memory": "128Mi"}, {"cpu": "999999", "memory": "256Mi"}),
        "resources.limits.cpu")
    assert "999999" in message and "at most 2 (KIONGA_AGENT_MAX_CPU)" in message
    message = refused(api, carol, version.pk, resources(
        {"cpu": "1", "memory": "128Mi"}, {"cpu": "1", "memory": "999999Gi"}),
        "resources.limits.memory")
    assert "at most 2Gi (KIONGA_AGENT_MAX_MEMORY)" in message
    assert cluster.requests == [] and not Agent.objects.exists()


def test_it_refuses_the_defaults_above_a_lower_pod_ceiling(api: Any, carol: User,
                                                           acme: Project, cluster: Peer,
                                                           settings: Any) -> None:
    settings.KIONGA_AGENT_MAX_CPU = "250m"  # the default limit is 500m
    version = published(carol, acme, prompt_graph())
    message = refused(api, carol, version.pk, {}, "resources.limits.cpu")
    assert "500m" in message and "250m" in message
    assert cluster.requests == [] and not Agent.objects.exists()


def test_it_refuses_requests_above_limits(api: Any, carol: User, acme: Project,
                                          cluster: Peer) -> None:
    version = published(carol, acme, prompt_graph())
    message = refused(api, carol, version.pk, resources(
        {"cpu": "1500m", "memory": "128Mi"}, {"cpu": "1", "memory": "256Mi"}),
        "resources.requests.cpu")
    assert message == "1500m is more than limits.cpu (1)."
    # Compared as quantities, not as text: 1Gi is more than 1000Mi.
    refused(api, carol, version.pk, resources(
        {"cpu": "100m", "memory": "1Gi"}, {"cpu": "1", "memory": "1000Mi"}),
        "resources.requests.memory")
    # The default requests (100m, 128Mi) count too.
    refused(api, carol, version.pk, {"resources": {"limits": {"cpu": "50m", "memory": "1Gi"}}},
            "resources.requests.cpu")
    assert cluster.requests == [] and not Agent.objects.exists()


@pytest.mark.parametrize(("quantity", "path"), [
    ({"cpu": "1", "memory": "128m"}, "resources.limits.memory"),  # 0.128 bytes
    ({"cpu": "1.5m", "memory": "1Gi"}, "resources.limits.cpu"),  # finer than 1m
    ({"cpu": "1e3", "memory": "1Gi"}, "resources.limits.cpu"),
    ({"cpu": "0", "memory": "1Gi"}, "resources.limits.cpu"),
    ({"cpu": "1", "memory": "1\n"}, "resources.limits.memory"),
])
def test_it_refuses_quantities_kubernetes_would_misread(api: Any, carol: User, acme: Project,
                                                        cluster: Peer, quantity: dict[str, str],
                                                        path: str) -> None:
    version = published(carol, acme, prompt_graph())
    refused(api, carol, version.pk, resources({"cpu": "1m", "memory": "1Mi"}, quantity), path)
    assert cluster.requests == []


@pytest.mark.parametrize(("body", "path"), [
    ({"autoscaling": {"max_replicas": 2, "replicas": 40}}, "autoscaling.replicas"),
    ({"resources": {"limits": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "8"}}},
     "resources.limits.nvidia.com/gpu"),
    ({"resources": {"requests": {"cpu": "1m", "memory": "1Mi", "ephemeral-storage": "1Ti"}}},
     "resources.requests.ephemeral-storage"),
    ({"resources": {"limit": {"cpu": "1", "memory": "1Gi"}}}, "resources.limit"),
    ({"replicas": 50}, "replicas"),
])
def test_it_refuses_unknown_keys_at_their_path(api: Any, carol: User, acme: Project,
                                               cluster: Peer, body: dict[str, Any],
                                               path: str) -> None:
    version = published(carol, acme, prompt_graph())
    message = refused(api, carol, version.pk, body, path)
    assert message.startswith("Unknown field (allowed: ")
    assert cluster.requests == [] and not Agent.objects.exists()


def test_it_deploys_at_the_pod_ceiling(api: Any, carol: User, acme: Project,
                                       cluster: Peer) -> None:
    version = published(carol, acme, prompt_graph())
    body = resources({"cpu": "2", "memory": "2Gi"}, {"cpu": "2000m", "memory": "2048Mi"})
    response = api.client_for(carol).post(deploy_url(version.pk), body, format="json")
    assert response.status_code == 201, response.content
    [container] = cluster.applied("Deployment")[0]["spec"]["template"]["spec"]["containers"]
    assert container["resources"] == body["resources"]
