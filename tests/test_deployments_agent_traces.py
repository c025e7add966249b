"""Deployed agents' traces can reach the operator's collector: every agent pod reads the
optional ConfigMap and Secret `kionga-agent-otel` (its OTEL_* variables), and with
KIONGA_AGENT_OTLP_EGRESS set each agent's NetworkPolicy gains one egress rule, to that
collector's pods or network on its port only (valid objects for Kubernetes); a deploy
applies it. A malformed setting is refused at start-up, naming the setting."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import kubernetes_validate
import pytest
from django.contrib.auth.models import User

from deployments.objects import OTEL_CONFIG, AgentSpec, deployment, network_policy
from kionga.models import Project
from kionga.otlp_egress import otlp_egress
from tests.deploy_helpers import deploy_url
from tests.k8s_peer import Peer
from tests.stack import ROOT
from tests.test_deployments_objects import K8S_VERSION, SPEC
from tests.versions_helpers import prompt_graph, published

COLLECTOR = "namespace=observability,port=4318,app.kubernetes.io/name=opentelemetry-collector"


def test_every_agent_pod_reads_the_optional_trace_settings() -> None:
    [container] = deployment(SPEC)["spec"]["template"]["spec"]["containers"]
    assert {"configMapRef": {"name": OTEL_CONFIG, "optional": True}} in container["envFrom"]
    assert {"secretRef": {"name": OTEL_CONFIG, "optional": True}} in container["envFrom"]


def test_without_the_setting_agents_reach_no_collector() -> None:
    assert len(network_policy(SPEC)["spec"]["egress"]) == 2  # the gateway and DNS only


@pytest.mark.parametrize(("setting", "peer", "port"), [
    (COLLECTOR, {"namespaceSelector": {"matchLabels": {
        "kubernetes.io/metadata.name": "observability"}},
        "podSelector": {"matchLabels": {"app.kubernetes.io/name": "opentelemetry-collector"}}},
     4318),
    ("namespace=observability,port=4318", {"namespaceSelector": {"matchLabels": {
        "kubernetes.io/metadata.name": "observability"}}}, 4318),
    ("cidr=10.0.12.0/24,port=14318", {"ipBlock": {"cidr": "10.0.12.0/24"}}, 14318),
])
def test_the_setting_opens_one_valid_rule_to_the_collector(
        setting: str, peer: dict[str, Any], port: int) -> None:
    spec = AgentSpec(**{**SPEC.__dict__, "otlp_egress": otlp_egress(setting)})
    policy = network_policy(spec)
    kubernetes_validate.validate(policy, K8S_VERSION, strict=True)
    gateway, dns, collector = policy["spec"]["egress"]
    assert collector == {"to": [peer], "ports": [{"port": port, "protocol": "TCP"}]}
    assert (gateway, dns) == tuple(network_policy(SPEC)["spec"]["egress"])


@pytest.mark.parametrize("setting", [
    "namespace=observability", "port=4318", "cidr=10.0.0.0/8,namespace=o,port=4318",
    "cidr=10.0.0.1/8,port=4318", "cidr=10.0.0.0/8,port=4318,app=x",
    "namespace=Observability,port=4318", "namespace=o,port=70000", "namespace=o,port=http",
    "namespace=o,port=4318,app=bad value", "namespace=o,port=4318,port=4317",
    "http://collector:4318",
])
def test_a_malformed_setting_is_refused(setting: str) -> None:
    assert otlp_egress(setting) is None


def test_the_gateway_does_not_start_with_a_malformed_setting() -> None:
    env = {**os.environ, "KIONGA_AGENT_OTLP_EGRESS": "collector:4318",
           "DJANGO_SETTINGS_MODULE": "kionga.settings"}
    done = subprocess.run([sys.executable, "-c", "import django; django.setup()"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "KIONGA_AGENT_OTLP_EGRESS must be" in done.stderr


def test_a_deploy_applies_the_collector_rule(api: Any, carol: User, acme: Project,
                                             cluster: Peer, settings: Any) -> None:
    settings.KIONGA_AGENT_OTLP_EGRESS = otlp_egress(COLLECTOR)
    version = published(carol, acme, prompt_graph())
    response = api.client_for(carol).post(deploy_url(version.pk), {}, format="json")
    assert response.status_code == 201, response.content
    [policy] = cluster.applied("NetworkPolicy")
    assert policy["spec"]["egress"][-1] == settings.KIONGA_AGENT_OTLP_EGRESS
