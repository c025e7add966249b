"""A deployed agent's canary: start one, read both versions' metrics, promote or roll back.

Start is a deploy of the canary version with `canary_percent`, carrying the agent's own
settings (a deploy body's defaults would otherwise resize its pods). Rollback refuses
(NO_CANARY) when no canary runs: `kionga agents rollback` is the step back to an earlier
version. Like `operations`, each returns a `Result` or raises `KiongaError`.
"""

from __future__ import annotations

from typing import Any

from kionga_client.errors import KiongaError
from kionga_client.gateway import Gateway
from kionga_client.operations import Result


def _agent(gw: Gateway, agent_id: str) -> dict[str, Any]:
    return dict(gw.request("GET", f"/agents/{agent_id}", not_found="AGENT_NOT_FOUND"))


def _version_id(gw: Gateway, agent: dict[str, Any], version: str) -> str:
    """The ID of the agent's design's version `version` (its number, or its ID)."""
    if not version.isdigit():
        return version
    listed = gw.request("GET", f"/agent-designs/{agent['design_id']}/versions",
                        not_found="DESIGN_NOT_FOUND")["versions"]
    for found in listed:
        if found["number"] == int(version):
            return str(found["id"])
    raise KiongaError("VERSION_NOT_FOUND", f"The agent's design has no version {version}.")


def canary_start(gw: Gateway, agent_id: str, version: str, percent: int) -> Result:
    agent = _agent(gw, agent_id)
    body = {**{k: agent["settings"][k] for k in ("autoscaling", "resources",
                                                  "require_evaluation")
               if k in agent["settings"]}, "canary_percent": percent}
    started = gw.request("POST", f"/agent-versions/{_version_id(gw, agent, version)}/deploy",
                         json=body, not_found="VERSION_NOT_FOUND")
    return Result({**started, "agent_id": started["id"]})


def canary_promote(gw: Gateway, agent_id: str) -> Result:
    promoted = gw.request("POST", f"/agents/{agent_id}/promote", not_found="AGENT_NOT_FOUND")
    return Result({**promoted, "agent_id": promoted["id"]})


def canary_rollback(gw: Gateway, agent_id: str) -> Result:
    if _agent(gw, agent_id).get("canary") is None:
        raise KiongaError("NO_CANARY", f"Agent {agent_id} runs no canary to roll back.")
    kept = gw.request("POST", f"/agents/{agent_id}/rollback", not_found="AGENT_NOT_FOUND")
    return Result({**kept, "agent_id": kept["id"]})


def canary_status(gw: Gateway, agent_id: str, hours: int = 24) -> Result:
    """The agent's canary and each version's totals over the last `hours`."""
    found = gw.request("GET", f"/agents/{agent_id}/operations", params={"hours": hours},
                       not_found="AGENT_NOT_FOUND")
    agent = found["agent"]
    return Result({"agent_id": agent["id"], "name": agent["name"], "hours": found["hours"],
                   "version": agent["version"], "canary": agent.get("canary"),
                   "versions": found["versions"]})
