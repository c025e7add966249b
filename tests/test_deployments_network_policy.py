"""An agent's NetworkPolicy admits callers only from namespaces labelled as agent callers,
and the gateway's worker (the beat pods, which hand over triggered turns), on the
runtime's port: no rule admits any source (other agents, unlabelled namespaces)."""

from __future__ import annotations

from deployments.objects import CALLERS_LABEL, RUNTIME_PORT, network_policy
from tests.test_deployments_objects import SPEC


def test_every_ingress_rule_names_its_sources() -> None:
    rules = network_policy(SPEC)["spec"]["ingress"]
    assert rules and all(rule.get("from") for rule in rules)
    [rule] = rules
    assert rule["from"] == [
        {"namespaceSelector": {"matchLabels": CALLERS_LABEL}},
        {"namespaceSelector": {"matchLabels": {
            "kubernetes.io/metadata.name": SPEC.gateway_namespace}},
         "podSelector": {"matchLabels": {"app.kubernetes.io/component": "beat"}}}]
    assert rule["ports"] == [{"port": RUNTIME_PORT, "protocol": "TCP"}]


def test_the_runtime_knows_its_name() -> None:
    from deployments.objects import deployment

    env = deployment(SPEC)["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "KIONGA_AGENT_NAME", "value": SPEC.name} in env
