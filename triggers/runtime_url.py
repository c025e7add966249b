"""Where the gateway reaches a deployed agent's runtime, to hand it a triggered turn.

A locally deployed agent (deployments/local.py) listens on the loopback port kept in its
folder; in Kubernetes, the agent's Service (deployments/objects.py: port 80, named after
the agent) in KIONGA_AGENT_NAMESPACE, whose NetworkPolicy admits the gateway's worker
(the beat pods of KIONGA_GATEWAY_NAMESPACE; deployments/objects.py).
"""

from __future__ import annotations

from django.conf import settings

from deployments.local import agent_url
from deployments.models import Agent


def runtime_url(agent: Agent) -> str:
    if settings.KIONGA_LOCAL_AGENTS_DIR:
        local = agent_url(settings.KIONGA_LOCAL_AGENTS_DIR, agent.name)
        if local is not None:
            return local
    return f"http://{agent.name}.{settings.KIONGA_AGENT_NAMESPACE}.svc.cluster.local"
