"""The signed task's payload → what the worker needs to run it.

The gateway builds the payload (runs/dispatch.py build_payload) and signs it, so a
malformed one is a bug, not an attack; still, every field is checked for its type,
and errors name the field, never its value (values may hold the run credential).
The model server never comes from the payload: its base URL and key are the runner's
own (MLAIOPS_LLM_*). A judge run's payload may name which backend and model to ask
there (`llm`: {backend, model}, evaluations.judge); other payloads leave the runner's
own backend and model. The run credential, the run's event key and its slot's lease
token travel sealed (`sealed`, runner/task_seal.py) with a key derived from the runner
token. `traceparent` (optional): the W3C trace context of the gateway's span that
started the run (runner.tracing); signed with the rest, so no one else can set it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from runner.records import Reused
from runner.request import APPROVAL_DECISIONS, LLMConfig, RunRequest, ScriptedApprovals
from runner.settings import LLM_BACKENDS, RunnerSettings
from runner.task_seal import SealError, unseal
from runner.tracing import valid_traceparent


class PayloadError(ValueError):
    """A field of a signed payload is missing or of the wrong type."""


@dataclass(frozen=True)
class TaskSecrets:
    credential: str
    event_key: bytes  # signs the run's event entries (runner.protocol.event_mac)
    lease: str  # names the run's slot lease (runner.protocol.lease_key)


@dataclass(frozen=True)
class RunTask:
    request: RunRequest
    credential: str
    callback_url: str
    lease: str
    # The W3C traceparent of the gateway's span that started the run (runner.tracing);
    # None: none was sent, or it is not one.
    traceparent: str | None = None


def task_secrets(payload: dict[str, Any], token: str) -> TaskSecrets:
    """The sealed credential, event key and lease token of a signed payload."""
    sealed = _required(payload, "sealed", str)
    try:
        values = unseal(sealed, token, str(payload.get("run_id")))
        return TaskSecrets(values["credential"], bytes.fromhex(values["event_key"]),
                           values["lease"])
    except (SealError, KeyError, ValueError) as exc:
        raise PayloadError("payload field 'sealed' must hold the credential, event key "
                           "and lease token, sealed for this runner and run") from exc


NO_SECRETS = TaskSecrets("", b"", "")


def secrets_of(payload: dict[str, Any], token: str) -> TaskSecrets:
    """The run's secrets, or empty ones when the payload has none: the worker needs the
    lease and event key before the payload is parsed (to claim the run, and to report
    a payload it cannot use). Without a lease the run has no slot to run in; without
    an event key its events are refused by the gateway."""
    try:
        return task_secrets(payload, token)
    except PayloadError:
        return NO_SECRETS


def parse_task(payload: dict[str, Any], settings: RunnerSettings,
               secrets: TaskSecrets | None = None) -> RunTask:
    """`secrets`: the payload's, when the caller already opened them (task_secrets)."""
    patterns = [*_list(payload, "secret_patterns", str), *settings.secret_patterns]
    request = RunRequest(
        graph=_required(payload, "graph", dict),
        input=_optional(payload, "input", str) or "",
        session_id=_optional(payload, "session_id", str),
        history=_list(payload, "history", dict),
        allow_side_effects=bool(_optional(payload, "allow_side_effects", bool)),
        stop_after=_optional(payload, "stop_after", str),
        subflows=_subflows(payload),
        subflow_hashes=_subflow_hashes(payload),
        secret_patterns=list(dict.fromkeys(patterns)),  # merged, in order, once each
        llm=_llm(payload, settings.llm),
        scripted_approvals=_scripted_approvals(payload),
        reuse=_reuse(payload),
    )
    if secrets is None:
        secrets = task_secrets(payload, settings.token)
    callback_url = _required(payload, "callback_url", str)
    if not secrets.credential or not callback_url.startswith(("http://", "https://")):
        raise PayloadError("credential and an http(s) callback_url are required")
    return RunTask(request, secrets.credential, callback_url, secrets.lease,
                   valid_traceparent(payload.get("traceparent")))


def _required(payload: dict[str, Any], name: str, type_: type) -> Any:
    value = payload.get(name)
    if not isinstance(value, type_):
        raise PayloadError(f"payload field {name!r} must be a {type_.__name__}")
    return value


def _optional(payload: dict[str, Any], name: str, type_: type) -> Any:
    return None if payload.get(name) is None else _required(payload, name, type_)


def _list(payload: dict[str, Any], name: str, item_type: type) -> list[Any]:
    items = _optional(payload, name, list) or []
    if not all(isinstance(item, item_type) for item in items):
        raise PayloadError(f"payload field {name!r} must be a list of {item_type.__name__}")
    return list(items)


def _scripted_approvals(payload: dict[str, Any]) -> ScriptedApprovals | None:
    """An evaluation's runs: how approvals resolve without people (else None)."""
    found = _optional(payload, "scripted_approvals", dict)
    if found is None:
        return None
    default, nodes = found.get("default"), found.get("nodes") or {}
    if default not in APPROVAL_DECISIONS or not isinstance(nodes, dict) or not all(
            isinstance(k, str) and v in APPROVAL_DECISIONS for k, v in nodes.items()):
        raise PayloadError("payload field 'scripted_approvals' must hold a default decision "
                           "and decisions by node ID (approve or reject)")
    return ScriptedApprovals(default, dict(nodes))


def _reuse(payload: dict[str, Any]) -> dict[str, Reused]:
    """A re-run's recorded outcomes by node ID: {port, value, from_run} each (from_run
    null: a designer's pinned output)."""
    found = _optional(payload, "reuse", dict) or {}
    reuse: dict[str, Reused] = {}
    for node_id, item in found.items():
        if not (isinstance(item, dict) and isinstance(item.get("port"), str)
                and isinstance(item.get("from_run"), (str, type(None))) and "value" in item):
            raise PayloadError("payload field 'reuse' must map node IDs to a port, a value "
                               "and the run they come from (or null)")
        reuse[node_id] = Reused(item["port"], item["value"], item["from_run"])
    return reuse


def _subflows(payload: dict[str, Any]) -> dict[str, dict[str, Any]]:
    subflows = _optional(payload, "subflows", dict) or {}
    if not all(isinstance(graph, dict) for graph in subflows.values()):
        raise PayloadError("payload field 'subflows' must map version IDs to graphs")
    return dict(subflows)


def _subflow_hashes(payload: dict[str, Any]) -> dict[str, str]:
    """The content_sha256 of every subflow: always verified (runner.artifacts), so a
    payload without them runs no subflow at all."""
    hashes = _optional(payload, "subflow_hashes", dict) or {}
    if not all(isinstance(sha, str) for sha in hashes.values()):
        raise PayloadError("payload field 'subflow_hashes' must map version IDs to hashes")
    return dict(hashes)


def _llm(payload: dict[str, Any], own: LLMConfig) -> LLMConfig:
    """The runner's platform model, with the backend and model a judge run names (an
    empty model: the runner's own); the base URL, key and timeouts stay its own."""
    choice = _optional(payload, "llm", dict)
    if choice is None:
        return own
    backend, model = choice.get("backend"), choice.get("model")
    if backend not in LLM_BACKENDS or not isinstance(model, str):
        raise PayloadError(f"payload field 'llm' must name a backend "
                           f"({', '.join(LLM_BACKENDS)}) and a model")
    return replace(own, backend=backend, model=model.strip() or own.model)
