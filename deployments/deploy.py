"""POST agent-versions/{id}/deploy: checks, then one transaction around the apply.

Order (docs/decisions/): the caller (editor or admin of the version's project),
the body, its pod limits against the installation's ceiling (400), every resource of the
version and of each nested version against the project now (422 validation_failed), the
quality gate when `require_evaluation` (409), the managed runtime (503
runtime_not_configured) — and only then the transaction that, holding the project's row,
checks the project's ceilings (409 project_deploy_quota), creates or rolls the agent
forward, records the rollout and applies the objects. A failed apply rolls the
transaction back: no agent, rollout or credential stays behind.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction

from deployments import cluster, objects
from deployments.canary import canary_document, check_canary_target, check_percent
from deployments.ceilings import check_pod_limits, check_project_ceilings, footprint
from deployments.credentials import issue_credential
from deployments.models import Agent, Rollout
from designs.actions import graph_report
from designs.models import Version
from kionga import audit
from kionga.errors import APIError
from kionga.models import Project

RESOURCE_CODES = frozenset({"unknown_resource", "unknown_version"})
AUDIT_ACTIONS = {Rollout.Action.DEPLOY: "agent.deployed",
                 Rollout.Action.ROLLBACK: "agent.rolled_back",
                 Rollout.Action.CANARY: "agent.canary_started",
                 Rollout.Action.PROMOTE: "agent.canary_promoted"}


@dataclass(frozen=True)
class DeployRequest:
    autoscaling: dict[str, int]
    resources: dict[str, dict[str, str]]
    require_evaluation: bool
    canary_percent: int | None = None  # deployments/canary.py


def check_version_resources(version: Version) -> None:
    """422 validation_failed when the version's graph, or a nested version's, names a
    resource or version its project no longer has."""
    artifact = version.artifact
    graphs = [(str(version.pk), artifact["graph"])]
    graphs += [(entry["version_id"], entry["graph"]) for entry in artifact.get("subflows", [])]
    issues: list[dict[str, Any]] = []
    for version_id, graph in graphs:
        report = graph_report(graph, version.project)
        issues += [{**issue.to_dict(),
                    "message": f"Published version {version_id}: {issue.message}"}
                   for issue in report.issues if issue.code in RESOURCE_CODES]
    if issues:
        raise APIError(422, "validation_failed",
                       "This version (or a version it runs) names resources its project no "
                       "longer has.", {"issues": issues})


def check_evaluation(version: Version) -> None:
    summary = version.artifact.get("evaluation")
    details = {"content_sha256": version.content_sha256}
    if not isinstance(summary, dict):
        raise APIError(409, "quality_gate", "This version was published without an "
                       "evaluation; require_evaluation needs a passing one.", details)
    if summary.get("passed") is not True:
        raise APIError(409, "quality_gate", "This version's evaluation did not pass.", details)
    if summary.get("content_sha256") not in (None, version.content_sha256):
        raise APIError(409, "quality_gate", "This version's evaluation is of another "
                       "behaviour hash.", details)


def do_deploy(user: User, version: Version, request: DeployRequest) -> tuple[Agent, bool]:
    settings_doc = {"autoscaling": request.autoscaling, "resources": request.resources,
                    "require_evaluation": request.require_evaluation}
    if request.canary_percent is not None:
        check_percent(request.canary_percent)
        return roll_out(user, version, settings_doc, Rollout.Action.CANARY,
                        canary_percent=request.canary_percent)
    return roll_out(user, version, settings_doc, Rollout.Action.DEPLOY)


def roll_out(user: User, version: Version, settings_doc: dict[str, Any],
             action: str, canary_percent: int | None = None) -> tuple[Agent, bool]:
    """Every check of a deploy, then the transaction: the one way an agent changes version
    (a deploy, a rollback, a canary's start and promotion). With `canary_percent`, `version`
    becomes the agent's canary and the agent keeps its version; without, it becomes the
    agent's version and any canary ends."""
    check_pod_limits(settings_doc["resources"])
    check_version_resources(version)
    if settings_doc.get("require_evaluation"):
        check_evaluation(version)
    runtime = cluster.check_cluster()
    autoscaling, resources = settings_doc["autoscaling"], settings_doc["resources"]
    with transaction.atomic():
        # One deploy per project at a time: the design's one agent and the project's
        # ceilings are both decided under this lock.
        Project.objects.select_for_update().filter(pk=version.project_id).first()
        agent = Agent.objects.filter(design_id=version.design_id).first()
        check_project_ceilings(version.project, agent, footprint(autoscaling, resources))
        if canary_percent is not None:
            agent = check_canary_target(agent, version)
        if action == Rollout.Action.PROMOTE and (agent is None
                                                 or agent.canary_version_id != version.pk):
            raise APIError(409, "no_canary", "This version is no longer the agent's canary.",
                           {"version_id": str(version.pk)})
        created = agent is None
        if agent is None:
            agent_id = uuid.uuid4()
            agent = Agent.objects.create(
                id=agent_id, project=version.project, design_id=version.design_id,
                name=f"agent-{agent_id.hex[:12]}", version=version, settings=settings_doc,
                created_by=user)
        else:
            if canary_percent is None:
                agent.version = version
            agent.canary_version = version if canary_percent is not None else None
            agent.canary_percent = canary_percent
            agent.settings = settings_doc
            agent.save(update_fields=["version", "canary_version", "canary_percent",
                                      "settings", "updated_at"])
        Rollout.objects.create(agent=agent, version=version, settings=settings_doc,
                               deployed_by=user, action=action, canary_percent=canary_percent)
        credential = issue_credential(agent) if created else None
        runtime.apply(objects.render(objects.AgentSpec(
            name=agent.name, namespace=runtime.namespace, image=runtime.image,
            artifact=agent.version.artifact, autoscaling=autoscaling,
            resources=resources, gateway_url=settings.KIONGA_AGENT_GATEWAY_URL,
            gateway_namespace=settings.KIONGA_GATEWAY_NAMESPACE, credential=credential,
            otlp_egress=settings.KIONGA_AGENT_OTLP_EGRESS,
            canary=(canary_document(version, canary_percent)
                    if canary_percent is not None else None))))
        audit.record(AUDIT_ACTIONS[Rollout.Action(action)], project=version.project, actor=user,
                     target_type="agent", target_id=agent.pk,
                     details={"version_id": str(version.pk), "version": version.number,
                              "content_sha256": version.content_sha256,
                              "created": created, "canary_percent": canary_percent,
                              "agent_version": agent.version.number, **settings_doc})
    return agent, created
