"""Without a Kubernetes cluster, KIONGA_LOCAL_AGENTS_DIR deploys to the local runtime: the
artifact and the credential (first deploy only, owner-readable) become files of the
agent's folder, with the loopback port it keeps; rolling forward rewrites the artifact
and keeps credential and port. Without the directory the deploy is still 503."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from deployments.models import Agent, AgentCredential
from kionga.models import Project
from kionga.tokens import hash_token
from tests.deploy_helpers import deploy_url
from tests.versions_helpers import prompt_graph, publish, published, save


def test_it_deploys_and_rolls_forward_on_this_machine(
        api: Any, carol: User, acme: Project, settings: Any, tmp_path: Path) -> None:
    settings.KIONGA_NATIVE_AGENT_IMAGE, settings.KIONGA_LOCAL_AGENTS_DIR = "", str(tmp_path)
    version = published(carol, acme, prompt_graph())
    client = api.client_for(carol)
    created = client.post(deploy_url(version.pk), {}, format="json")
    assert created.status_code == 201, created.content
    agent = Agent.objects.get(pk=created.json()["id"])
    folder = tmp_path / agent.name
    assert json.loads((folder / "artifact.json").read_text()) == version.artifact
    credential = (folder / "credential").read_text()
    assert AgentCredential.objects.get(agent=agent).token_hash == hash_token(credential)
    assert stat.S_IMODE((folder / "credential").stat().st_mode) == 0o600
    port = int((folder / "port").read_text())
    assert 0 < port < 65536

    second = publish(carol, save(carol, version.design, prompt_graph("Again: {input}")))
    rolled = client.post(deploy_url(second.pk), {}, format="json")
    assert rolled.status_code == 200, rolled.content
    assert json.loads((folder / "artifact.json").read_text()) == second.artifact
    assert (folder / "credential").read_text() == credential
    assert int((folder / "port").read_text()) == port
    assert sorted(p.name for p in folder.iterdir()) == ["artifact.json", "credential", "port"]


@pytest.mark.allow_output  # Django logs the 503
def test_without_cluster_or_directory_it_is_503(
        api: Any, carol: User, acme: Project, settings: Any) -> None:
    settings.KIONGA_NATIVE_AGENT_IMAGE, settings.KIONGA_LOCAL_AGENTS_DIR = "", ""
    version = published(carol, acme, prompt_graph())
    answer = api.client_for(carol).post(deploy_url(version.pk), {}, format="json")
    error = api.assert_error(answer, 503, "runtime_not_configured")
    assert "KIONGA_LOCAL_AGENTS_DIR" in error["message"]
    assert not Agent.objects.exists()
