"""Deploys refused before anything is created: no managed runtime (503 with the
troubleshooting text), require_evaluation without a passing evaluation (409), and a
resource the project no longer has, in the version or a nested version (422)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from django.conf import settings as django_settings
from django.contrib.auth.models import User

from deployments.cluster import K8S_SETTINGS
from deployments.models import Agent
from kionga.models import Project
from kionga.resource_models import KnowledgeBase
from tests.deploy_helpers import KB_GRAPH_NODE, deploy_url
from tests.k8s_peer import Peer
from tests.loopback import serving
from tests.versions_helpers import flow_graph, linear, prompt_graph, published

TROUBLESHOOTING = "Deploying needs the Kubernetes managed runtime and KIONGA_NATIVE_AGENT_IMAGE"


@pytest.mark.allow_output  # the unreachable cluster is logged
def test_it_answers_503_without_the_managed_runtime(api: Any, carol: User, acme: Project,
                                                    settings: Any, tmp_path: Any,
                                                    caplog: Any) -> None:
    version = published(carol, acme, prompt_graph())
    client = api.client_for(carol)
    settings.KIONGA_KUBECONFIG, settings.KIONGA_NATIVE_AGENT_IMAGE = "", ""
    error = api.assert_error(client.post(deploy_url(version.pk), {}, format="json"),
                             503, "runtime_not_configured")
    assert TROUBLESHOOTING in error["message"] and "IMAGE is not set" in error["message"]
    settings.KIONGA_NATIVE_AGENT_IMAGE = "agent:1"
    error = api.assert_error(client.post(deploy_url(version.pk), {}, format="json"),
                             503, "runtime_not_configured")
    assert "No Kubernetes cluster is configured" in error["message"]
    # A kubeconfig whose cluster is gone (a port nobody listens on any more).
    with serving(object) as gone:  # type: ignore[arg-type]
        pass
    config = tmp_path / "kubeconfig"
    config.write_text('{"apiVersion": "v1", "kind": "Config", "current-context": "c",'
                      f'"clusters": [{{"name": "c", "cluster": {{"server": "{gone}"}}}}],'
                      '"users": [{"name": "u", "user": {}}],'
                      '"contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}')
    settings.KIONGA_KUBECONFIG = str(config)
    error = api.assert_error(client.post(deploy_url(version.pk), {}, format="json"),
                             503, "runtime_not_configured")
    assert "cannot be reached" in error["message"] and TROUBLESHOOTING in error["message"]
    assert not Agent.objects.exists()
    assert "the Kubernetes API cannot be reached" in caplog.text


def test_it_refuses_require_evaluation_without_a_passing_evaluation(
        api: Any, carol: User, acme: Project, cluster: Peer) -> None:
    version = published(carol, acme, prompt_graph())
    error = api.assert_error(api.client_for(carol).post(
        deploy_url(version.pk), {"require_evaluation": True}, format="json"), 409,
        "quality_gate")
    assert error["details"] == {"content_sha256": version.content_sha256}
    # A failed evaluation summary in the artifact does not pass either.
    version.artifact = {**version.artifact, "evaluation": {"passed": False}}
    version.save(update_fields=["artifact"])
    api.assert_error(api.client_for(carol).post(
        deploy_url(version.pk), {"require_evaluation": True}, format="json"), 409,
        "quality_gate")
    assert cluster.requests == [] and not Agent.objects.exists()
    version.artifact = {**version.artifact, "evaluation": {
        "passed": True, "content_sha256": version.content_sha256}}
    version.save(update_fields=["artifact"])
    response = api.client_for(carol).post(deploy_url(version.pk), {"require_evaluation": True},
                                          format="json")
    assert response.status_code == 201, response.content


def test_it_rechecks_the_resources_of_nested_versions(api: Any, carol: User, acme: Project,
                                                      cluster: Peer) -> None:
    KnowledgeBase._default_manager.create(project=acme, key="handbook")
    leaf = published(carol, acme, linear(dict(KB_GRAPH_NODE)), name="Leaf")
    top = published(carol, acme, flow_graph("subflow", str(leaf.pk)), name="Top")
    KnowledgeBase._default_manager.filter(project=acme, key="handbook").delete()
    error = api.assert_error(api.client_for(carol).post(deploy_url(top.pk), {}, format="json"),
                             422, "validation_failed")
    [issue] = error["details"]["issues"]
    assert issue["code"] == "unknown_resource" and str(leaf.pk) in issue["message"]
    assert cluster.requests == [] and not Agent.objects.exists()


@pytest.mark.allow_output  # Django logs the 503
def test_its_503_names_the_setting_where_the_shipped_manifests_set_it(
        api: Any, carol: User, acme: Project, settings: Any) -> None:
    settings.KIONGA_NATIVE_AGENT_IMAGE = ""
    version = published(carol, acme, prompt_graph())
    error = api.assert_error(api.client_for(carol).post(deploy_url(version.pk), {}, format="json"),
                             503, "runtime_not_configured")
    assert K8S_SETTINGS in error["message"] and "Helm" not in error["message"]
    config_map = yaml.safe_load((Path(django_settings.BASE_DIR) / K8S_SETTINGS).read_text())
    assert config_map["kind"] == "ConfigMap" and config_map["metadata"]["name"] in error["message"]
    assert "KIONGA_NATIVE_AGENT_IMAGE" in config_map["data"]
