"""POST agents/{id}/rollback: the agent back to the version it ran before, hash-verified.

"Before" is the newest rollout of another version than the one the agent runs now, with
that rollout's settings; rolling back twice returns to where it started. The version's
stored artifact must hash to the content_sha256 recorded at publish (the graph and every
nested version's graph, runner.artifacts; 409 `hash_mismatch` otherwise) before any
other check; then every check and the transaction of a deploy (deploy.roll_out), recorded
as a rollout of action `rollback` and audited as `agent.rolled_back`. During a canary
(deployments/canary.py) a rollback ends the canary instead: the agent keeps its version.
"""

from __future__ import annotations

from django.contrib.auth.models import User

from deployments.deploy import roll_out
from deployments.models import Agent, Rollout
from designs.models import Version
from kionga.errors import APIError
from runner.artifacts import graph_hash, mismatched_versions


def previous_rollout(agent: Agent) -> Rollout:
    """The newest rollout of a version other than the current one; 409
    `no_previous_version` when the agent has only ever run this one."""
    # A canary's rollout is not a version the agent ran (it served a share of turns).
    found = (Rollout.objects.filter(agent=agent).exclude(version_id=agent.version_id)
             .exclude(action=Rollout.Action.CANARY)
             .select_related("version__project").order_by("-deployed_at", "-id").first())
    if found is None:
        raise APIError(409, "no_previous_version",
                       f"Agent {agent.name} has only ever run version {agent.version.number}: "
                       "there is no earlier version to roll back to.",
                       {"agent_id": str(agent.pk), "version": agent.version.number})
    return found


def check_version_hash(version: Version) -> None:
    """409 `hash_mismatch` unless the stored artifact is what was published: its graph,
    and each nested version's, hashes to its recorded content_sha256."""
    artifact = version.artifact if isinstance(version.artifact, dict) else {}
    listed = artifact.get("subflows", [])
    entries = listed if isinstance(listed, list) else [None]
    well_formed = all(isinstance(entry, dict) for entry in entries)
    subflows = {str(e.get("version_id")): e.get("graph") for e in entries if isinstance(e, dict)}
    hashes = {str(e.get("version_id")): str(e.get("content_sha256"))
              for e in entries if isinstance(e, dict)}
    intact = (well_formed and artifact.get("content_sha256") == version.content_sha256
              and graph_hash(artifact.get("graph")) == version.content_sha256
              and not mismatched_versions(subflows, hashes))
    if not intact:
        raise APIError(409, "hash_mismatch",
                       f"Version {version.number}'s stored artifact does not hash to the "
                       "content_sha256 recorded when it was published; it is not deployed.",
                       {"version_id": str(version.pk),
                        "content_sha256": version.content_sha256})


def do_rollback(user: User, agent: Agent) -> Agent:
    if agent.canary_version_id is not None:
        # During a canary, rolling back ends it: the agent keeps its version, alone.
        check_version_hash(agent.version)
        kept, _ = roll_out(user, agent.version, agent.settings, Rollout.Action.ROLLBACK)
        return kept
    previous = previous_rollout(agent)
    check_version_hash(previous.version)
    rolled, _ = roll_out(user, previous.version, previous.settings, Rollout.Action.ROLLBACK)
    return rolled
