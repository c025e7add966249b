"""The managed runtime: a Kubernetes cluster reached with the official client.

Configured when KIONGA_NATIVE_AGENT_IMAGE is set and a cluster is reachable: the
kubeconfig at KIONGA_KUBECONFIG, else the in-cluster service account (when the gateway
runs in a pod). Without a cluster, KIONGA_LOCAL_AGENTS_DIR selects the local runtime
(deployments/local.py: agents as processes of this machine, for the demo). Objects are
applied with server-side apply (field manager `kionga`, forced), so applying the same
objects again changes nothing.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from django.conf import settings
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError

from deployments.local import LocalRuntime
from kionga.errors import APIError

log = logging.getLogger(__name__)
FIELD_MANAGER: Final = "kionga"
APPLY: Final = "application/apply-patch+yaml"
TIMEOUT: Final = (3.0, 10.0)
# Where the shipped Kubernetes manifests (kustomize) set the gateway's settings.
K8S_SETTINGS: Final = "docker/k8s/config.yaml"
TROUBLESHOOTING: Final = ("Deploying needs the Kubernetes managed runtime and "
                          "KIONGA_NATIVE_AGENT_IMAGE, the agent-runtime image, in the gateway's "
                          "environment (on Kubernetes: the ConfigMap kionga-config, "
                          f"{K8S_SETTINGS}). Locally, set KIONGA_LOCAL_AGENTS_DIR (bin/demo "
                          "does) or run the version from the designer.")


def runtime_unavailable(reason: str) -> APIError:
    return APIError(503, "runtime_not_configured", f"{reason} {TROUBLESHOOTING}",
                    {"reason": reason})


@dataclass(frozen=True)
class Cluster:
    api: client.ApiClient
    image: str
    namespace: str

    def apply(self, objects: list[dict[str, Any]]) -> None:
        """Server-side apply each object, in order (503 when the cluster refuses)."""
        for manifest in objects:
            patch = _patcher(self.api, manifest["kind"])
            name = manifest["metadata"]["name"]
            try:
                patch(name, self.namespace, manifest, field_manager=FIELD_MANAGER, force=True,
                      _content_type=APPLY, _request_timeout=TIMEOUT)
            except (ApiException, HTTPError, OSError, ValueError) as exc:
                log.warning("apply of %s/%s failed: %s", manifest["kind"], name, exc)
                raise runtime_unavailable(
                    f"The cluster refused {manifest['kind']} {name}.") from None


def check_cluster() -> Cluster | LocalRuntime:
    """The configured, reachable cluster; else the local runtime when
    KIONGA_LOCAL_AGENTS_DIR is set (deployments/local.py); else 503 runtime_not_configured."""
    image = settings.KIONGA_NATIVE_AGENT_IMAGE
    api = _api_client() if image else None
    if api is None and settings.KIONGA_LOCAL_AGENTS_DIR:
        return LocalRuntime(Path(settings.KIONGA_LOCAL_AGENTS_DIR))
    if not image:
        raise runtime_unavailable("KIONGA_NATIVE_AGENT_IMAGE is not set.")
    if api is None:
        raise runtime_unavailable("No Kubernetes cluster is configured.")
    try:
        client.VersionApi(api).get_code(_request_timeout=TIMEOUT)
    except (ApiException, HTTPError, OSError, ValueError) as exc:
        log.warning("the Kubernetes API cannot be reached: %s", exc)
        raise runtime_unavailable("The Kubernetes cluster cannot be reached.") from None
    return Cluster(api, image, settings.KIONGA_AGENT_NAMESPACE)


def _api_client() -> client.ApiClient | None:
    configuration = client.Configuration()
    try:
        if settings.KIONGA_KUBECONFIG:
            config.load_kube_config(config_file=settings.KIONGA_KUBECONFIG,
                                    client_configuration=configuration)
        elif os.environ.get("KUBERNETES_SERVICE_HOST"):
            config.load_incluster_config(client_configuration=configuration)
        else:
            return None
    except (config.ConfigException, OSError, ValueError) as exc:
        log.warning("the Kubernetes configuration cannot be loaded: %s", exc)
        return None
    configuration.retries = False
    return client.ApiClient(configuration)


def _patcher(api: client.ApiClient, kind: str) -> Callable[..., Any]:
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    patchers: dict[str, Callable[..., Any]] = {
        "ConfigMap": core.patch_namespaced_config_map,
        "Secret": core.patch_namespaced_secret,
        "Service": core.patch_namespaced_service,
        "Deployment": apps.patch_namespaced_deployment,
        "HorizontalPodAutoscaler":
            client.AutoscalingV2Api(api).patch_namespaced_horizontal_pod_autoscaler,
        "NetworkPolicy": client.NetworkingV1Api(api).patch_namespaced_network_policy,
    }
    return patchers[kind]
