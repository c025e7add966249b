"""Every object rendered for an agent is valid for Kubernetes (kubernetes-validate, strict
schemas) and its pod meets the restricted Pod Security Standard."""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest

from deployments.objects import AgentSpec, render

K8S_VERSION = "1.32.0"
SPEC = AgentSpec(
    name="agent-0123456789ab", namespace="kionga-agents", image="kionga/agent-runtime:1",
    artifact={"version": 1, "content_sha256": "a" * 64, "version_id": "v", "graph": {}},
    autoscaling={"min_replicas": 2, "max_replicas": 4, "target_cpu_percent": 70},
    resources={"requests": {"cpu": "100m", "memory": "128Mi"},
               "limits": {"cpu": "500m", "memory": "256Mi"}},
    gateway_url="http://gateway-internal.kionga.svc.cluster.local:8087/api/v1",
    gateway_namespace="kionga", credential="kag_x")


@pytest.mark.parametrize("manifest", render(SPEC), ids=lambda m: m["kind"])
def test_it_renders_valid_objects(manifest: dict[str, Any]) -> None:
    kubernetes_validate.validate(manifest, K8S_VERSION, strict=True)


def test_it_locks_the_pod_down() -> None:
    by_kind = {m["kind"]: m for m in render(SPEC)}
    pod = by_kind["Deployment"]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert pod["automountServiceAccountToken"] is False
    [container] = pod["containers"]
    assert container["command"] == ["python", "-m", "agents.serve"]
    assert container["securityContext"] | {} == {
        "runAsNonRoot": True, "runAsUser": 10001, "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True, "privileged": False, "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"}}
    assert container["resources"] == SPEC.resources
    assert "replicas" not in by_kind["Deployment"]["spec"]  # the autoscaler owns them
    policy = by_kind["NetworkPolicy"]["spec"]
    assert policy["policyTypes"] == ["Ingress", "Egress"]
    gateway, dns = policy["egress"]
    assert gateway["ports"] == [{"port": 8087, "protocol": "TCP"}]
    assert gateway["to"][0]["podSelector"]["matchLabels"] == {
        "app.kubernetes.io/component": "internal"}
    assert {p["port"] for p in dns["ports"]} == {53}


def test_it_applies_the_credential_only_when_issued() -> None:
    without = AgentSpec(**{**SPEC.__dict__, "credential": None})
    assert "Secret" not in [m["kind"] for m in render(without)]
