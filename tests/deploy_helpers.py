"""Helpers of the deploy tests: a published version, a configured loopback cluster."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.k8s_peer import Peer, kubernetes_peer

IMAGE = "registry.example/kionga/agent-runtime:1.0"
KB_GRAPH_NODE = {"id": "kb", "kind": "knowledge",
                 "config": {"knowledge_base": "handbook", "query": "{input}"}}


@pytest.fixture
def cluster(settings: Any, tmp_path: Path) -> Iterator[Peer]:
    """A reachable managed runtime: the loopback API server and the image set."""
    with kubernetes_peer() as peer:
        settings.KIONGA_KUBECONFIG = str(peer.kubeconfig(tmp_path / "kubeconfig"))
        settings.KIONGA_NATIVE_AGENT_IMAGE = IMAGE
        yield peer


def deploy_url(version_id: Any) -> str:
    return f"/api/v1/agent-versions/{version_id}/deploy"
