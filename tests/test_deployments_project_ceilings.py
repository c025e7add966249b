"""A project's deployed agents stay within the operator's ceilings: how many agents, the
sum of their max_replicas, and of max_replicas x limits (cpu, memory). Past one the
deploy is 409 project_deploy_quota naming it, and nothing is created or applied; an
agent rolled forward counts once, with its new settings; other projects are apart."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User

from deployments.models import Agent, Rollout
from kionga.models import Project
from tests.deploy_helpers import deploy_url
from tests.k8s_peer import Peer
from tests.versions_helpers import prompt_graph, published

QUOTA = "project_deploy_quota"


def deploy(api: Any, user: User, version_id: Any, body: dict[str, Any]) -> Any:
    return api.client_for(user).post(deploy_url(version_id), body, format="json")


def sized(max_replicas: int, cpu: str = "500m", memory: str = "256Mi") -> dict[str, Any]:
    return {"autoscaling": {"min_replicas": 1, "max_replicas": max_replicas},
            "resources": {"requests": {"cpu": "10m", "memory": "16Mi"},
                          "limits": {"cpu": cpu, "memory": memory}}}


def refused(api: Any, user: User, version_id: Any, body: dict[str, Any],
            cluster: Peer) -> dict[str, Any]:
    """The 409's details; the deploy applied nothing and recorded no agent or rollout."""
    agents, rollouts, applied = (Agent.objects.count(), Rollout.objects.count(),
                                 len(cluster.requests))
    error = api.assert_error(deploy(api, user, version_id, body), 409, QUOTA)
    assert (Agent.objects.count(), Rollout.objects.count(), len(cluster.requests)) == (
        agents, rollouts, applied)
    assert error["details"]["setting"] in error["message"]
    return dict(error["details"])


def test_it_refuses_fifty_replicas_beyond_the_ceiling(api: Any, carol: User, acme: Project,
                                                      cluster: Peer) -> None:
    version = published(carol, acme, prompt_graph())
    details = refused(api, carol, version.pk, sized(50, cpu="10m", memory="16Mi"), cluster)
    assert details == {"ceiling": "replicas", "setting": "KIONGA_PROJECT_MAX_AGENT_REPLICAS",
                       "limit": 30, "requested": 50}
    assert deploy(api, carol, version.pk, sized(30, cpu="10m", memory="16Mi")).status_code == (
        201)


def test_it_caps_the_number_of_agents(api: Any, carol: User, acme: Project, mallory: User,
                                      cluster: Peer, settings: Any) -> None:
    settings.KIONGA_PROJECT_MAX_AGENTS = 2
    first, second, third = (published(carol, acme, prompt_graph(), name=f"Flow {n}")
                            for n in range(3))
    assert deploy(api, carol, first.pk, {}).status_code == 201
    assert deploy(api, carol, second.pk, {}).status_code == 201
    details = refused(api, carol, third.pk, {}, cluster)
    assert details == {"ceiling": "agents", "setting": "KIONGA_PROJECT_MAX_AGENTS",
                       "limit": 2, "requested": 3}
    # Rolling a deployed design forward adds no agent.
    assert deploy(api, carol, second.pk, sized(2)).status_code == 200
    # Another project's agents are its own.
    evil = Project.objects.get(slug="evil")
    assert deploy(api, mallory, published(mallory, evil, prompt_graph()).pk, {}).status_code == (
        201)


def test_it_caps_replicas_times_cpu_limits(api: Any, carol: User, acme: Project,
                                           cluster: Peer, settings: Any) -> None:
    settings.KIONGA_PROJECT_MAX_AGENT_CPU = "4"
    first, second = (published(carol, acme, prompt_graph(), name=f"Flow {n}") for n in range(2))
    assert deploy(api, carol, first.pk, sized(4, cpu="1")).status_code == 201  # 4 CPUs
    details = refused(api, carol, second.pk, sized(1, cpu="500m"), cluster)
    assert details == {"ceiling": "cpu", "setting": "KIONGA_PROJECT_MAX_AGENT_CPU",
                       "limit": "4", "requested": "4.5"}
    # The first agent rolled forward counts with its new settings, once.
    assert deploy(api, carol, first.pk, sized(3, cpu="1")).status_code == 200
    assert deploy(api, carol, second.pk, sized(1, cpu="1")).status_code == 201
    refused(api, carol, first.pk, sized(3, cpu="1001m"), cluster)


def test_it_caps_replicas_times_memory_limits(api: Any, carol: User, acme: Project,
                                              cluster: Peer, settings: Any) -> None:
    settings.KIONGA_PROJECT_MAX_AGENT_MEMORY = "1Gi"
    first, second = (published(carol, acme, prompt_graph(), name=f"Flow {n}") for n in range(2))
    assert deploy(api, carol, first.pk, sized(3)).status_code == 201  # 768Mi
    details = refused(api, carol, second.pk, sized(2), cluster)
    assert details == {"ceiling": "memory", "setting": "KIONGA_PROJECT_MAX_AGENT_MEMORY",
                       "limit": "1Gi", "requested": "1280Mi"}
    assert deploy(api, carol, second.pk, sized(1)).status_code == 201  # exactly 1Gi
