"""The Kubernetes objects of one deployed agent, rendered as plain manifests.

Per agent: a ConfigMap holding the artifact, a Secret with the agent credential (only
when one is issued: the first deploy), a Deployment of KIONGA_NATIVE_AGENT_IMAGE running
`python -m agents.serve`, a Service, a HorizontalPodAutoscaler and a NetworkPolicy
whose only egress is the gateway's internal listener (and DNS to find it), plus the
trace collector the operator names (KIONGA_AGENT_OTLP_EGRESS), and whose only ingress
is the runtime's port from namespaces labelled as agent callers. The pod
meets the restricted Pod Security Standard. tests/test_deployments_objects.py validates
each object against the Kubernetes OpenAPI schemas (kubernetes-validate).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

RUNTIME_PORT: Final = 8080
INTERNAL_PORT: Final = 8087
ARTIFACT_DIR: Final = "/etc/kionga"
ARTIFACT_FILE: Final = "artifact.json"
# During a canary: {"percent", "artifact"} of the version serving that share of turns.
CANARY_FILE: Final = "canary.json"
CREDENTIAL_KEY: Final = "credential"
# The runtime reads MLAIOPS_LLM_* (its platform model) from this optional ConfigMap.
LLM_CONFIG: Final = "kionga-agent-llm"
# ... and OTEL_* (traces, runner/tracing.py) from this optional ConfigMap, and from an
# optional Secret of the same name (e.g. OTEL_EXPORTER_OTLP_HEADERS with a collector key).
OTEL_CONFIG: Final = "kionga-agent-otel"
RUN_AS: Final = 10001
# Who may call agents: pods of namespaces carrying this label (your Ingress controller's,
# your applications'); every call still needs an agent API key.
CALLERS_LABEL: Final = {"kionga.dev/agent-callers": "true"}


@dataclass(frozen=True)
class AgentSpec:
    name: str
    namespace: str
    image: str
    artifact: dict[str, Any]
    autoscaling: dict[str, int]
    resources: dict[str, dict[str, str]]
    gateway_url: str
    gateway_namespace: str
    credential: str | None = None  # raw value; only on the deploy that issues it
    # A canary's {"percent": 1-99, "artifact": {...}} (docs/decisions/canary-routing-in-
    # the-runtime.md): the runtime verifies both artifacts and chooses per turn.
    canary: dict[str, Any] | None = None
    # The NetworkPolicy egress rule to the trace collector (kionga/otlp_egress.py), if any.
    otlp_egress: dict[str, Any] | None = None


def render(spec: AgentSpec) -> list[dict[str, Any]]:
    """Every object, in apply order (what the Deployment mounts comes first)."""
    objects = [config_map(spec)]
    if spec.credential is not None:
        objects.append(secret(spec))
    return [*objects, deployment(spec), service(spec), autoscaler(spec),
            network_policy(spec)]


def labels(spec: AgentSpec) -> dict[str, str]:
    return {"app.kubernetes.io/name": "kionga-agent", "app.kubernetes.io/instance": spec.name,
            "app.kubernetes.io/managed-by": "kionga"}


def _meta(spec: AgentSpec, name: str) -> dict[str, Any]:
    return {"name": name, "namespace": spec.namespace, "labels": labels(spec)}


def _json(document: dict[str, Any]) -> str:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def config_map(spec: AgentSpec) -> dict[str, Any]:
    data = {ARTIFACT_FILE: _json(spec.artifact)}
    if spec.canary is not None:
        data[CANARY_FILE] = _json(spec.canary)
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": _meta(spec, f"{spec.name}-artifact"), "data": data}


def secret(spec: AgentSpec) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": _meta(spec, f"{spec.name}-credential"),
            "stringData": {CREDENTIAL_KEY: spec.credential}}


def deployment(spec: AgentSpec) -> dict[str, Any]:
    env = [
        {"name": "KIONGA_AGENT_ARTIFACT", "value": f"{ARTIFACT_DIR}/{ARTIFACT_FILE}"},
        {"name": "KIONGA_AGENT_GATEWAY_URL", "value": spec.gateway_url},
        {"name": "KIONGA_AGENT_PORT", "value": str(RUNTIME_PORT)},
        {"name": "KIONGA_AGENT_HOST", "value": "0.0.0.0"},
        {"name": "KIONGA_AGENT_NAME", "value": spec.name},
        {"name": "KIONGA_AGENT_CREDENTIAL", "valueFrom": {"secretKeyRef": {
            "name": f"{spec.name}-credential", "key": CREDENTIAL_KEY}}},
    ]
    annotations = {"kionga.dev/content-sha256": str(spec.artifact.get("content_sha256", "")),
                   "kionga.dev/version-id": str(spec.artifact.get("version_id", ""))}
    if spec.canary is not None:
        env.append({"name": "KIONGA_AGENT_CANARY", "value": f"{ARTIFACT_DIR}/{CANARY_FILE}"})
        annotations["kionga.dev/canary-version-id"] = str(
            spec.canary["artifact"].get("version_id", ""))
        annotations["kionga.dev/canary-percent"] = str(spec.canary["percent"])
    container = {
        "name": "agent", "image": spec.image,
        "command": ["python", "-m", "agents.serve"],
        "env": env,
        "envFrom": [{"configMapRef": {"name": LLM_CONFIG, "optional": True}},
                    {"configMapRef": {"name": OTEL_CONFIG, "optional": True}},
                    {"secretRef": {"name": OTEL_CONFIG, "optional": True}}],
        "ports": [{"name": "http", "containerPort": RUNTIME_PORT, "protocol": "TCP"}],
        "resources": spec.resources,
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"},
                           "periodSeconds": 5},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"},
                          "periodSeconds": 20},
        "securityContext": {
            "runAsNonRoot": True, "runAsUser": RUN_AS, "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True, "privileged": False,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "volumeMounts": [{"name": "artifact", "mountPath": ARTIFACT_DIR, "readOnly": True},
                         {"name": "tmp", "mountPath": "/tmp"}],
    }
    pod = {
        # The hash in the template: a new version (or canary) rolls the pods even though
        # the ConfigMap keeps its name.
        "metadata": {"labels": labels(spec), "annotations": annotations},
        "spec": {
            "automountServiceAccountToken": False,
            "enableServiceLinks": False,
            "securityContext": {"runAsNonRoot": True, "runAsUser": RUN_AS,
                                "runAsGroup": RUN_AS, "fsGroup": RUN_AS,
                                "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [container],
            "volumes": [{"name": "artifact", "configMap": {"name": f"{spec.name}-artifact"}},
                        {"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}}],
        },
    }
    # No replicas: the HorizontalPodAutoscaler owns them (an applied count would fight it).
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(spec, spec.name),
            "spec": {"selector": {"matchLabels": labels(spec)},
                     "strategy": {"type": "RollingUpdate",
                                  "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}},
                     "template": pod}}


def service(spec: AgentSpec) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": _meta(spec, spec.name),
            "spec": {"type": "ClusterIP", "selector": labels(spec),
                     "ports": [{"name": "http", "port": 80, "targetPort": "http",
                                "protocol": "TCP"}]}}


def autoscaler(spec: AgentSpec) -> dict[str, Any]:
    scaling = spec.autoscaling
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": _meta(spec, spec.name),
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": spec.name},
                     "minReplicas": scaling["min_replicas"],
                     "maxReplicas": scaling["max_replicas"],
                     "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                         "type": "Utilization",
                         "averageUtilization": scaling["target_cpu_percent"]}}}]}}


def network_policy(spec: AgentSpec) -> dict[str, Any]:
    gateway = {"namespaceSelector": {"matchLabels": {
                   "kubernetes.io/metadata.name": spec.gateway_namespace}},
               "podSelector": {"matchLabels": {"app.kubernetes.io/component": "internal"}}}
    # The gateway's Celery worker (the beat pods) hands turns a trigger opened to the
    # runtime (triggers/dispatch.py): it alone of the gateway's pods may call in.
    triggers = {"namespaceSelector": {"matchLabels": {
                    "kubernetes.io/metadata.name": spec.gateway_namespace}},
                "podSelector": {"matchLabels": {"app.kubernetes.io/component": "beat"}}}
    dns = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
           "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": _meta(spec, spec.name),
            "spec": {"podSelector": {"matchLabels": labels(spec)},
                     "policyTypes": ["Ingress", "Egress"],
                     # Only callers' namespaces and the gateway's worker reach the turn
                     # port; nothing else is open (not other agents, nor any pod of an
                     # unlabelled namespace).
                     "ingress": [{"from": [{"namespaceSelector": {"matchLabels": CALLERS_LABEL}},
                                           triggers],
                                  "ports": [{"port": RUNTIME_PORT, "protocol": "TCP"}]}],
                     "egress": [
                         {"to": [gateway], "ports": [{"port": INTERNAL_PORT,
                                                      "protocol": "TCP"}]},
                         {"to": [dns], "ports": [{"port": 53, "protocol": "UDP"},
                                                 {"port": 53, "protocol": "TCP"}]},
                         *([spec.otlp_egress] if spec.otlp_egress else []),
                     ]}}
