"""A local deploy passes the gateway's trace settings to the agent: its OTEL_* variables
(not OTEL_SERVICE_NAME: the agent's spans keep `kionga-agent`) become the agent folder's
owner-readable `otel.json` (they may hold a collector key); a deploy while the gateway
has none removes it, so the agent stops exporting."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from deployments.models import Agent
from kionga.models import Project
from tests.deploy_helpers import deploy_url
from tests.versions_helpers import prompt_graph, publish, published, save


def test_the_deploy_writes_the_gateways_trace_settings(
        api: Any, carol: User, acme: Project, settings: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    settings.KIONGA_NATIVE_AGENT_IMAGE, settings.KIONGA_LOCAL_AGENTS_DIR = "", str(tmp_path)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-collector-key=k-123")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "kionga-gateway")
    version = published(carol, acme, prompt_graph())
    client = api.client_for(carol)
    created = client.post(deploy_url(version.pk), {}, format="json")
    assert created.status_code == 201, created.content
    otel = tmp_path / Agent.objects.get(pk=created.json()["id"]).name / "otel.json"
    assert json.loads(otel.read_text()) == {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
        "OTEL_EXPORTER_OTLP_HEADERS": "x-collector-key=k-123"}
    assert stat.S_IMODE(otel.stat().st_mode) == 0o600

    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS"):
        monkeypatch.delenv(name)
    second = publish(carol, save(carol, version.design, prompt_graph("Again: {input}")))
    assert client.post(deploy_url(second.pk), {}, format="json").status_code == 200
    assert not otel.exists()
