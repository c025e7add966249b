"""docker/k8s/: the kustomization renders with `kubectl kustomize`, every object is valid
for Kubernetes (kubernetes-validate, strict schemas), and the system's shape holds: each
Procfile process runs its line unchanged; gateway, internal listener and runner run more
than one replica, beat exactly one; every pod meets the restricted Pod Security Standard;
the runner is locked down as in compose (no token, no database or Django secret, only its
environment; no ingress, egress only to Redis, the internal listener and DNS); PostgreSQL
and Redis come by URL from the Secret, which is not rendered, and the Redis settings it
must run with (memory limit, never evicting) are those compose starts its Redis with;
the internal listener is where deployed agents look for it; the agents' namespace
carries a LimitRange whose maxima are the gateway's pod ceilings and a ResourceQuota
that holds a project at its ceilings."""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

import kubernetes_validate
import pytest
import yaml
from kubernetes.utils.quantity import parse_quantity

from deployments.ceilings import POD_CEILINGS
from deployments.objects import AgentSpec, labels, network_policy
from deployments.serializers import DEFAULT_RESOURCES
from runner import protocol
from tests.docker_kit import (
    DOCKER,
    PROCFILE_SERVICES,
    RUNNER_ENV_ALLOWED,
    load_compose,
    procfile,
    redis_settings,
    unwrap_command,
)

K8S = DOCKER / "k8s"
K8S_VERSION = "1.32.0"
SECRET = "kionga-secrets"


@pytest.fixture(scope="module")
def rendered() -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl is missing: bin/test installs it (Debian's kubernetes-client)"
    out = subprocess.run([kubectl, "kustomize", str(K8S)], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def by_kind(objects: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == kind}


def pod_specs(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o["spec"]["template"]["spec"] for o in objects
            if o["kind"] in ("Deployment", "Job")}


def test_every_object_is_valid_for_kubernetes(rendered: list[dict[str, Any]]) -> None:
    assert len(rendered) > 15
    for manifest in rendered:
        kubernetes_validate.validate(manifest, K8S_VERSION, strict=True)
        namespaced = manifest["kind"] not in ("Namespace",)
        assert bool(manifest["metadata"].get("namespace")) == namespaced, manifest["metadata"]


def test_each_process_runs_its_procfile_line(rendered: list[dict[str, Any]]) -> None:
    deployments, lines = by_kind(rendered, "Deployment"), procfile()
    assert set(deployments) == set(PROCFILE_SERVICES)
    for name in PROCFILE_SERVICES:
        [container] = deployments[name]["spec"]["template"]["spec"]["containers"]
        assert unwrap_command(container["command"]) == lines[name], name
        image = "kionga-runner:local" if name == "runner" else "kionga-gateway:local"
        assert container["image"] == image
    replicas = {name: d["spec"]["replicas"] for name, d in deployments.items()}
    assert replicas["gateway"] > 1 and replicas["internal"] > 1 and replicas["runner"] > 1
    assert replicas["beat"] == 1 and deployments["beat"]["spec"]["strategy"] == {
        "type": "Recreate"}
    [migrate] = by_kind(rendered, "Job")["kionga-migrate"]["spec"]["template"]["spec"][
        "containers"]
    assert migrate["command"][-2:] == ["migrate", "--noinput"]
    for name in ("gateway", "internal", "events", "beat"):  # wait for the migrations
        [wait] = deployments[name]["spec"]["template"]["spec"]["initContainers"]
        assert "migrate --check" in wait["command"][-1]


def test_every_pod_is_restricted(rendered: list[dict[str, Any]]) -> None:
    for namespace in by_kind(rendered, "Namespace").values():
        assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == (
            "restricted")
    for name, pod in pod_specs(rendered).items():
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        assert not {"hostNetwork", "hostPID", "hostIPC"} & set(pod), name
        assert all(set(volume) == {"name", "emptyDir"} for volume in pod["volumes"]), name
        for container in pod["containers"] + pod.get("initContainers", []):
            context = container["securityContext"]
            assert (context["allowPrivilegeEscalation"], context["readOnlyRootFilesystem"],
                    context["privileged"], context["runAsNonRoot"]) == (
                        False, True, False, True), name
            assert context["capabilities"] == {"drop": ["ALL"]}
            assert container["resources"]["limits"].keys() == {"cpu", "memory"}
        if name != "gateway":  # only the public listener deploys agents
            assert pod["automountServiceAccountToken"] is False, name


def test_the_runner_is_locked_down(rendered: list[dict[str, Any]]) -> None:
    pod = pod_specs(rendered)["runner"]
    [container] = pod["containers"]
    assert "envFrom" not in container and "ports" not in container
    env = {e["name"]: e for e in container["env"]}
    assert set(env) <= RUNNER_ENV_ALLOWED
    secret_keys = {e["valueFrom"]["secretKeyRef"]["key"] for e in env.values()
                   if "secretKeyRef" in e.get("valueFrom", {})}
    assert secret_keys == {"REDIS_RUNNER_URL", "KIONGA_RUNNER_TOKEN"}
    assert env["KIONGA_BIND_HOST"]["value"] == "127.0.0.1"
    assert container["resources"]["limits"] == {"cpu": "2", "memory": "2Gi"}
    runner_labels = {"app.kubernetes.io/name": "kionga", "app.kubernetes.io/component": "runner"}
    assert all(s["spec"]["selector"] != runner_labels
               for s in by_kind(rendered, "Service").values())
    policy = by_kind(rendered, "NetworkPolicy")["runner"]["spec"]
    assert policy["podSelector"]["matchLabels"] == runner_labels
    assert policy["policyTypes"] == ["Ingress", "Egress"] and policy["ingress"] == []
    redis, internal, dns = policy["egress"]
    assert redis["ports"] == [{"port": 6379, "protocol": "TCP"}]
    assert all(set(peer) == {"ipBlock"} for peer in redis["to"])
    assert internal["ports"] == [{"port": 8087, "protocol": "TCP"}]
    assert internal["to"] == [{"podSelector": {"matchLabels": {
        "app.kubernetes.io/name": "kionga", "app.kubernetes.io/component": "internal"}}}]
    assert {p["port"] for p in dns["ports"]} == {53}


def test_databases_come_by_url_from_the_secret(rendered: list[dict[str, Any]]) -> None:
    assert "Secret" not in {o["kind"] for o in rendered}
    assert "StatefulSet" not in {o["kind"] for o in rendered}
    example = (K8S / "secrets.example.env").read_text(encoding="utf-8")
    documented = {line.partition("=")[0] for line in example.splitlines()
                  if line and not line.startswith("#")}
    for name, pod in pod_specs(rendered).items():
        for container in pod["containers"] + pod.get("initContainers", []):
            refs = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in container["env"]
                    if "secretKeyRef" in e.get("valueFrom", {})}
            assert {ref["name"] for ref in refs.values()} == {SECRET}
            assert {ref["key"] for ref in refs.values()} <= documented
            if name != "runner":
                assert {"DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY"} <= set(refs)


def test_redis_gets_the_memory_settings_compose_starts_it_with(
        rendered: list[dict[str, Any]]) -> None:
    conf = by_kind(rendered, "ConfigMap")["kionga-redis"]["data"]["redis.conf"]
    lines = dict(line.split(None, 1) for line in conf.splitlines() if line.strip())
    compose = redis_settings(load_compose())
    assert lines == {"maxmemory": compose["maxmemory"],
                     "maxmemory-policy": protocol.REDIS_MAXMEMORY_POLICY}


def test_agents_find_the_internal_listener(rendered: list[dict[str, Any]],
                                           settings: Any) -> None:
    service = by_kind(rendered, "Service")["gateway-internal"]["spec"]
    assert service["ports"][0]["port"] == 8087
    assert service["selector"]["app.kubernetes.io/component"] == "internal"
    config = by_kind(rendered, "ConfigMap")["kionga-config"]["data"]
    assert config["KIONGA_AGENT_GATEWAY_URL"] == settings.KIONGA_AGENT_GATEWAY_URL
    assert config["KIONGA_GATEWAY_NAMESPACE"] == settings.KIONGA_GATEWAY_NAMESPACE
    assert config["KIONGA_AGENT_NAMESPACE"] == settings.KIONGA_AGENT_NAMESPACE
    internal = by_kind(rendered, "NetworkPolicy")["internal"]["spec"]["ingress"][0]
    agents = internal["from"][1]
    assert agents["namespaceSelector"]["matchLabels"] == {
        "kubernetes.io/metadata.name": settings.KIONGA_AGENT_NAMESPACE}
    [role] = by_kind(rendered, "Role").values()
    assert role["metadata"]["namespace"] == settings.KIONGA_AGENT_NAMESPACE
    # An agent's own policy lets it reach exactly these pods, in this namespace.
    egress = network_policy(AgentSpec("agent-x", settings.KIONGA_AGENT_NAMESPACE, "i", {},
                                      {}, {}, "u", settings.KIONGA_GATEWAY_NAMESPACE))
    [peer] = egress["spec"]["egress"][0]["to"]
    pod_labels = by_kind(rendered, "Deployment")["internal"]["spec"]["template"]["metadata"][
        "labels"]
    assert peer["podSelector"]["matchLabels"].items() <= pod_labels.items()
    assert peer["namespaceSelector"]["matchLabels"] == {
        "kubernetes.io/metadata.name": service_namespace(rendered, "gateway-internal")}
    assert agents["podSelector"]["matchLabels"].items() <= labels(
        AgentSpec("agent-x", "", "", {}, {}, {}, "", "")).items()


def service_namespace(objects: list[dict[str, Any]], name: str) -> str:
    return str(by_kind(objects, "Service")[name]["metadata"]["namespace"])


def test_the_agents_namespace_is_bounded(rendered: list[dict[str, Any]], settings: Any) -> None:
    agents_namespace = settings.KIONGA_AGENT_NAMESPACE
    [limit_range] = by_kind(rendered, "LimitRange").values()
    [quota] = by_kind(rendered, "ResourceQuota").values()
    assert limit_range["metadata"]["namespace"] == quota["metadata"]["namespace"] == (
        agents_namespace)
    [container] = limit_range["spec"]["limits"]
    assert container["type"] == "Container"
    # Its maxima are the ceilings the gateway checks (ConfigMap and settings' defaults),
    # its defaults the deploy body's.
    config = by_kind(rendered, "ConfigMap")["kionga-config"]["data"]
    for kind, setting in POD_CEILINGS.items():
        assert container["max"][kind] == config[setting] == getattr(settings, setting)
    assert container["default"] == DEFAULT_RESOURCES["limits"]
    assert container["defaultRequest"] == DEFAULT_RESOURCES["requests"]
    # The namespace's quota holds at least one project at every ceiling, with a rolling
    # update's surge pod per agent.
    for name in ("KIONGA_PROJECT_MAX_AGENTS", "KIONGA_PROJECT_MAX_AGENT_REPLICAS",
                 "KIONGA_PROJECT_MAX_AGENT_CPU", "KIONGA_PROJECT_MAX_AGENT_MEMORY"):
        assert config[name] == str(getattr(settings, name))
    hard = {key: parse_quantity(value) for key, value in quota["spec"]["hard"].items()}
    agents = int(config["KIONGA_PROJECT_MAX_AGENTS"])
    for counted in ("count/deployments.apps", "count/horizontalpodautoscalers.autoscaling",
                    "count/networkpolicies.networking.k8s.io", "services", "secrets",
                    "configmaps"):
        assert hard[counted] >= agents, counted
    assert hard["pods"] >= int(config["KIONGA_PROJECT_MAX_AGENT_REPLICAS"]) + agents
    surge_cpu = agents * parse_quantity(config["KIONGA_AGENT_MAX_CPU"])
    surge_memory = agents * parse_quantity(config["KIONGA_AGENT_MAX_MEMORY"])
    assert hard["limits.cpu"] >= parse_quantity(config["KIONGA_PROJECT_MAX_AGENT_CPU"]) + (
        surge_cpu)
    assert hard["limits.memory"] >= parse_quantity(
        config["KIONGA_PROJECT_MAX_AGENT_MEMORY"]) + surge_memory
    assert hard["requests.cpu"] >= parse_quantity(config["KIONGA_PROJECT_MAX_AGENT_CPU"])
    assert hard["requests.memory"] >= parse_quantity(config["KIONGA_PROJECT_MAX_AGENT_MEMORY"])
    assert hard["services.loadbalancers"] == hard["services.nodeports"] == 0


def test_the_gateway_is_told_which_proxies_to_believe(rendered: list[dict[str, Any]]) -> None:
    # The Ingress controller is the proxy; empty until the operator names its pods'
    # network (kionga.proxies): no client can pick its address by a header.
    config = by_kind(rendered, "ConfigMap")["kionga-config"]
    assert config["data"]["KIONGA_TRUSTED_PROXIES"] == ""
    [gateway] = pod_specs(rendered)["gateway"]["containers"]
    assert {"configMapRef": {"name": "kionga-config"}} in gateway["envFrom"]
    assert "--no-proxy-headers" in unwrap_command(gateway["command"]).split()
