"""The local runtime of deployed agents, for a machine without Kubernetes (bin/demo).

When KIONGA_LOCAL_AGENTS_DIR is set and no cluster is configured, a deploy renders the
same objects as for Kubernetes (deployments/objects.py) and applies the two that carry
what the runtime needs: the artifact (its ConfigMap) and the credential (its Secret, on
the first deploy) become files of `<dir>/<agent name>/`, next to the loopback port the
agent keeps for its life, and the gateway's own OTEL_* variables (its trace exporter's
settings, what the ConfigMap kionga-agent-otel holds for a pod) become `otel.json`.
`python -m agents.local <dir>` (agents/local.py) runs one `python -m agents.serve` per
agent there, and starts it again on a new artifact: the
same runtime, the same hash checks at start-up. The other objects (Deployment, Service,
autoscaler, NetworkPolicy) have no local meaning and are skipped.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from contracts.agent_runtime import (
    LOCAL_ARTIFACT,
    LOCAL_CANARY,
    LOCAL_CREDENTIAL,
    LOCAL_OTEL,
    LOCAL_PORT,
    OTEL_NOT_PASSED,
    OTEL_PREFIX,
)
from deployments.objects import ARTIFACT_FILE, CANARY_FILE, CREDENTIAL_KEY
from kionga.errors import APIError

NAMESPACE: Final = "local"
IMAGE: Final = "local"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _write(path: Path, text: str, mode: int = 0o644) -> None:
    """Whole or not at all: the runner of agents never reads half a file."""
    partial = path.with_name(f".{path.name}.partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(text)
    os.replace(partial, path)


def otel_settings(environ: Mapping[str, str]) -> dict[str, str]:
    """The trace exporter's variables an agent's process gets from this one's."""
    return {name: value for name, value in sorted(environ.items())
            if name.startswith(OTEL_PREFIX) and name not in OTEL_NOT_PASSED}


@dataclass(frozen=True)
class LocalRuntime:
    root: Path
    image: str = IMAGE
    namespace: str = NAMESPACE

    def apply(self, objects: list[dict[str, Any]]) -> None:
        for manifest in objects:
            name = manifest["metadata"]["labels"]["app.kubernetes.io/instance"]
            folder = self.root / name
            try:
                folder.mkdir(parents=True, exist_ok=True)
                if manifest["kind"] == "ConfigMap":
                    # The canary and the trace settings first: the runner of agents
                    # restarts on the artifact's change and reads them all then (a
                    # canary's end removes its file).
                    otel = otel_settings(os.environ)
                    if otel:  # it may hold the collector's key (OTEL_EXPORTER_OTLP_HEADERS)
                        _write(folder / LOCAL_OTEL, json.dumps(otel), 0o600)
                    else:
                        (folder / LOCAL_OTEL).unlink(missing_ok=True)
                    canary = manifest["data"].get(CANARY_FILE)
                    if canary is not None:
                        _write(folder / LOCAL_CANARY, canary)
                    else:
                        (folder / LOCAL_CANARY).unlink(missing_ok=True)
                    _write(folder / LOCAL_ARTIFACT, manifest["data"][ARTIFACT_FILE])
                elif manifest["kind"] == "Secret":
                    _write(folder / LOCAL_CREDENTIAL, manifest["stringData"][CREDENTIAL_KEY],
                           0o600)
                if not (folder / LOCAL_PORT).exists():
                    _write(folder / LOCAL_PORT, str(_free_port()))
            except OSError as exc:
                raise APIError(503, "runtime_not_configured",
                               f"The local runtime cannot write {folder}: {exc.strerror}.",
                               {"reason": "local_runtime_unwritable"}) from None


def agent_url(directory: str, name: str) -> str | None:
    """The loopback URL of a locally deployed agent, once it has a port."""
    try:
        return f"http://127.0.0.1:{int((Path(directory) / name / LOCAL_PORT).read_text())}"
    except (OSError, ValueError):
        return None
