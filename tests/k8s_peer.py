"""A loopback Kubernetes API server for the deploy tests: a real HTTP peer the official
client talks to through a kubeconfig (nothing in the client is mocked).

It answers GET /version, and PATCH (server-side apply) and GET of namespaced
ConfigMaps, Secrets, Services, Deployments, HorizontalPodAutoscalers and NetworkPolicies.
It keeps the applied objects, bumps resourceVersion only when an apply changes one (as
the apiserver does), records every request, and can be told to refuse a kind.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.loopback import serving

ROUTE = re.compile(r"^/(?:api/v1|apis/(?P<group>[a-z0-9.]+)/(?P<version>v[0-9a-z]+))"
                   r"/namespaces/(?P<ns>[a-z0-9-]+)/(?P<plural>[a-z]+)/(?P<name>[a-z0-9-]+)$")
VERSION = {"major": "1", "minor": "32", "gitVersion": "v1.32.0", "gitCommit": "loopback",
           "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.23",
           "compiler": "gc", "platform": "linux/amd64"}
KINDS = {"configmaps": "ConfigMap", "secrets": "Secret", "services": "Service",
         "deployments": "Deployment", "horizontalpodautoscalers": "HorizontalPodAutoscaler",
         "networkpolicies": "NetworkPolicy"}


@dataclass
class Peer:
    url: str = ""
    objects: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    refuse: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    revision: int = 0

    def applied(self, kind: str) -> list[dict[str, Any]]:
        return [o for (k, _, _), o in sorted(self.objects.items()) if k == kind]

    def kubeconfig(self, path: Path) -> Path:
        path.write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "loopback",
            "clusters": [{"name": "loopback", "cluster": {"server": self.url}}],
            "users": [{"name": "gateway", "user": {"token": "loopback-token"}}],
            "contexts": [{"name": "loopback",
                          "context": {"cluster": "loopback", "user": "gateway"}}]}))
        return path


def _handler(peer: Peer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            url = urlsplit(self.path)
            if url.path in ("/version", "/version/"):
                return self._send(200, VERSION)
            match = ROUTE.match(url.path)
            key = (KINDS.get(match["plural"], ""), match["ns"], match["name"]) if match else None
            found = peer.objects.get(key) if key else None
            if found is None:
                return self._send(404, {"kind": "Status", "apiVersion": "v1", "code": 404,
                                        "status": "Failure", "reason": "NotFound"})
            self._send(200, found)

        def do_PATCH(self) -> None:  # noqa: N802
            url = urlsplit(self.path)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            match = ROUTE.match(url.path)
            with peer.lock:
                peer.requests.append({"path": url.path, "query": parse_qs(url.query),
                                      "content_type": self.headers["Content-Type"],
                                      "authorization": self.headers.get("Authorization"),
                                      "body": body})
                if match is None or KINDS.get(match["plural"]) != body.get("kind"):
                    return self._send(404, {"kind": "Status", "code": 404})
                if body["kind"] in peer.refuse:
                    return self._send(403, {"kind": "Status", "apiVersion": "v1", "code": 403,
                                            "status": "Failure", "reason": "Forbidden"})
                key = (body["kind"], match["ns"], match["name"])
                stored = peer.objects.get(key)
                if stored is None or _content(stored) != body:
                    peer.revision += 1
                    meta = {**body["metadata"], "resourceVersion": str(peer.revision),
                            "uid": f"uid-{key[0].lower()}-{key[2]}"}
                    peer.objects[key] = {**body, "metadata": meta}
                self._send(200, peer.objects[key])

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def _content(stored: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in stored["metadata"].items() if k not in ("resourceVersion", "uid")}
    return {**stored, "metadata": meta}


@contextmanager
def kubernetes_peer() -> Iterator[Peer]:
    peer = Peer()
    with serving(_handler(peer)) as url:
        peer.url = url
        yield peer
