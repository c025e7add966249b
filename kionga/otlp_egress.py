"""KIONGA_AGENT_OTLP_EGRESS: where deployed agents may send their traces (the egress
rule each agent's NetworkPolicy gains, deployments/objects.py).

Comma-separated `key=value` pairs; `port` and exactly one of `namespace` or `cidr`:

    namespace=observability,port=4318,app.kubernetes.io/name=opentelemetry-collector
    cidr=10.0.12.0/24,port=4318

With `namespace`, every other pair is a label the collector's pods carry (none: any pod
of that namespace). The rule allows TCP to that port only (OTLP/HTTP, what the runtime
exports). Parsed at start-up: a malformed value stops the process naming the setting.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Final

EXAMPLE: Final = ("namespace=<namespace>,port=<port>[,<pod label>=<value>...] "
                  "or cidr=<network>,port=<port>")
# Kubernetes' shapes: a namespace (DNS label), a label key ([prefix/]name) and value.
_NAMESPACE: Final = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_NAME: Final = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_LABEL_KEY: Final = re.compile(rf"([a-z0-9]([-a-z0-9.]{{0,251}}[a-z0-9])?/)?{_NAME}")
_LABEL_VALUE: Final = re.compile(rf"({_NAME})?")


def otlp_egress(text: str) -> dict[str, Any] | None:
    """The NetworkPolicy egress rule the setting names; None when it is malformed."""
    pairs: dict[str, str] = {}
    for part in text.split(","):
        key, equals, value = part.strip().partition("=")
        if not equals or key in pairs:
            return None
        pairs[key] = value
    port_text, namespace, cidr = (pairs.pop(k, None) for k in ("port", "namespace", "cidr"))
    if port_text is None or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        return None
    if (namespace is None) == (cidr is None):
        return None
    if cidr is not None:
        try:
            network = ipaddress.ip_network(cidr, strict=True)
        except ValueError:
            return None
        if pairs:
            return None  # labels select pods, not addresses
        peer: dict[str, Any] = {"ipBlock": {"cidr": str(network)}}
    else:
        if not _NAMESPACE.fullmatch(namespace or ""):
            return None
        if not all(_LABEL_KEY.fullmatch(k) and _LABEL_VALUE.fullmatch(v)
                   for k, v in pairs.items()):
            return None
        peer = {"namespaceSelector": {"matchLabels": {
            "kubernetes.io/metadata.name": namespace}}}
        if pairs:
            peer["podSelector"] = {"matchLabels": pairs}
    return {"to": [peer], "ports": [{"port": int(port_text), "protocol": "TCP"}]}
