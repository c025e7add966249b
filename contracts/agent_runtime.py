"""What the deployed agent runtime (agents/) and the gateway (runs.agent_auth,
deployments.api_keys) agree on: headers, the callers' key format and the error codes
the runtime passes on to its callers."""

from __future__ import annotations

from typing import Final

# Sent with every resource and approval call of a turn: the turn it acts for.
TURN_HEADER: Final = "X-Kionga-Turn"
# The caller's agent API key, passed on by the runtime for the gateway to verify, count
# and bind to the turn (the runtime never decides a key is good by itself).
KEY_HEADER: Final = "X-Kionga-Agent-Key"
# Agent API keys: this prefix + 256 random bits (url-safe).
API_KEY_PREFIX: Final = "kak_"
# The gateway's refusals of a caller's key, passed on to the caller with their status.
INVALID_API_KEY: Final = "invalid_api_key"  # 401: missing, unknown, revoked, expired
THROTTLED: Final = "throttled"  # 429 with Retry-After: beyond the key's rate

# The local runtime (deployments/local.py writes, agents/local.py runs): each agent's
# folder holds these files.
LOCAL_ARTIFACT: Final = "artifact.json"
LOCAL_CREDENTIAL: Final = "credential"
LOCAL_PORT: Final = "port"
# During a canary only: {"percent", "artifact"} of the canary version.
LOCAL_CANARY: Final = "canary.json"
# The gateway's OTEL_* variables at the deploy, {name: value} (the local counterpart of
# the ConfigMap and Secret kionga-agent-otel): the agent's process exports traces as the
# gateway does.
LOCAL_OTEL: Final = "otel.json"
OTEL_PREFIX: Final = "OTEL_"
# Not passed on: the agent's spans keep their own service name (kionga-agent).
OTEL_NOT_PASSED: Final = frozenset({"OTEL_SERVICE_NAME"})
# The share of turns a canary may serve, in percent (deployments.canary, agents.canary).
CANARY_MIN_PERCENT: Final = 1
CANARY_MAX_PERCENT: Final = 99

# The runtime's route for a turn a trigger opened (triggers/, agents/app.py): the gateway
# posts {turn_id}; the runtime claims the turn with its credential and runs it.
TRIGGERED_TURNS_PATH: Final = "/triggered-turns"
