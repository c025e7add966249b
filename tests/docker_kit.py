"""Parsing helpers and constants for the docker/ tests (no Docker engine here)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
DOCKER = ROOT / "docker"
COMPOSE = DOCKER / "compose.yaml"
PROCFILE = ROOT / "Procfile"
GATEWAY_DOCKERFILE = DOCKER / "Dockerfile.gateway"
RUNNER_DOCKERFILE = DOCKER / "Dockerfile.runner"
RUNNER_REQUIREMENTS = DOCKER / "requirements-runner.txt"
REDIS_ACL = DOCKER / "redis-users.acl"
REDIS_START = DOCKER / "redis-start.sh"
REDIS_K8S_CONFIG = DOCKER / "k8s" / "redis.yaml"

# Procfile process -> compose service (same names) and the image that runs it by default.
PROCFILE_SERVICES = ["gateway", "internal", "events", "beat", "runner"]
IMAGE_DEFAULTS = {GATEWAY_DOCKERFILE: "gateway", RUNNER_DOCKERFILE: "runner"}
GATEWAY_PROCESSES = ["migrate", "gateway", "internal", "events", "beat"]

# The runner's environment: Redis, its token, its port (and bind address), the
# concurrency cap and the model settings (reference "Configuration", Where = runner).
RUNNER_ENV_ALLOWED = {
    "REDIS_URL",
    "KIONGA_DESIGNER_RUNNER_TOKEN",
    "KIONGA_DESIGNER_PORT",
    "KIONGA_BIND_HOST",
    "KIONGA_DESIGNER_MAX_RUNS",
    "MLAIOPS_LLM_BACKEND",
    "MLAIOPS_LLM_MODEL",
    "MLAIOPS_LLM_BASE_URL",
    "KIONGA_JUDGE_BACKEND",
    "KIONGA_JUDGE_MODEL",
}
# Gateway-only secrets: none may reach the runner, not even inside another value.
GATEWAY_SECRETS = ["DATABASE_URL", "POSTGRES_PASSWORD", "DJANGO_SECRET_KEY", "postgres://",
                   "REDIS_GATEWAY_PASSWORD"]
# What the runner image may copy from the build context.
RUNNER_COPY_ALLOWED = {"runner", "contracts", "agents", "docker/requirements-runner.txt",
                       "docker/healthcheck.py"}
DJANGO_SIDE = {"kionga", "designs", "runs", "evaluations", "approvals", "manage.py", "."}
SECRET_NAME = re.compile(r"(TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|PRIVATE_KEY)", re.IGNORECASE)


# ---------------------------------------------------------------------------
# Parsing helpers


def load_compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def service(compose: dict[str, Any], name: str) -> dict[str, Any]:
    found = compose["services"][name]
    assert isinstance(found, dict)
    return found


def with_defaults(value: Any) -> str:
    """A compose value as it runs when nothing is set: each `${NAME:-default}` → default."""
    return re.sub(r"\$\{[A-Za-z_][A-Za-z0-9_]*:-([^}]*)\}", r"\1", str(value))


def redis_settings(compose: dict[str, Any]) -> dict[str, str]:
    """The `--name value` options the redis service passes to redis-server (defaults)."""
    argv = [with_defaults(part) for part in service(compose, "redis")["command"]]
    return {argv[i][2:]: argv[i + 1] for i in range(len(argv) - 1) if argv[i].startswith("--")}


def procfile() -> dict[str, str]:
    processes: dict[str, str] = {}
    for line in PROCFILE.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, _, command = line.partition(":")
        processes[name.strip()] = command.strip()
    return processes


def unwrap_command(command: Any) -> str:
    """The command line a compose `command` (or Dockerfile CMD) runs, as in the Procfile.

    Exec form `["sh", "-c", "exec LINE"]` gives LINE; compose's `$$` escape (a literal
    `$` left for the container's shell) is undone. Other lists are joined.
    """
    if isinstance(command, str):
        argv = shlex.split(command)
    else:
        assert isinstance(command, list), command
        argv = [str(part) for part in command]
    if len(argv) == 3 and argv[0] in {"sh", "/bin/sh"} and argv[1] == "-c":
        line = argv[2].strip()
        line = line.removeprefix("exec ").strip()
    else:
        line = " ".join(argv)
    return line.replace("$$", "$")


def env_of(svc: dict[str, Any]) -> dict[str, str]:
    raw = svc.get("environment") or {}
    if isinstance(raw, list):
        pairs = (item.partition("=") for item in raw)
        return {key: value for key, _, value in pairs}
    assert isinstance(raw, dict)
    return {str(key): "" if value is None else str(value) for key, value in raw.items()}


def networks_of(svc: dict[str, Any]) -> set[str]:
    if svc.get("network_mode"):
        return {f"network_mode:{svc['network_mode']}"}
    raw = svc.get("networks")
    if not raw:
        return {"default"}  # compose puts a service without networks on `default`
    return set(raw)


def volume_entries(svc: dict[str, Any]) -> list[dict[str, Any]]:
    """Volumes in long form: {type, source, target}."""
    entries: list[dict[str, Any]] = []
    for volume in svc.get("volumes") or []:
        if isinstance(volume, dict):
            entries.append(volume)
            continue
        parts = str(volume).split(":")
        source, target = (parts[0], parts[1]) if len(parts) > 1 else ("", parts[0])
        # Short syntax: a path (or variable) on the left is the host's; a name is a volume.
        kind = "bind" if source.startswith(("/", ".", "~", "$")) else "volume"
        entries.append({"type": kind, "source": source, "target": target})
    return entries


def memory_bytes(value: Any) -> int:
    if isinstance(value, int):
        return value
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([bkmg]?)b?\s*", str(value).lower())
    assert match, f"unreadable memory size {value!r}"
    scale = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[match.group(2)]
    return int(float(match.group(1)) * scale)


def limit(svc: dict[str, Any], key: str, deploy_key: str) -> Any:
    limits = ((svc.get("deploy") or {}).get("resources") or {}).get("limits") or {}
    return svc.get(key, limits.get(deploy_key))


def dockerfile_instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with continuation lines joined and comments dropped."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = pending + line
        pending = ""
        keyword, _, arguments = line.partition(" ")
        instructions.append((keyword.upper(), arguments.strip()))
    return instructions


def final_stage(path: Path) -> list[tuple[str, str]]:
    instructions = dockerfile_instructions(path)
    starts = [index for index, (keyword, _) in enumerate(instructions) if keyword == "FROM"]
    return instructions[starts[-1]:]


def context_copies(instructions: list[tuple[str, str]]) -> list[str]:
    """Sources of COPY/ADD instructions taken from the build context (not other stages)."""
    sources: list[str] = []
    for keyword, arguments in instructions:
        if keyword not in {"COPY", "ADD"}:
            continue
        words = shlex.split(arguments)
        if any(word.startswith("--from") for word in words):
            continue
        paths = [word for word in words if not word.startswith("--")]
        sources.extend(source.rstrip("/").removeprefix("./") or "." for source in paths[:-1])
    return sources


def pins(path: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        requirement = Requirement(line)
        specifiers = list(requirement.specifier)
        assert len(specifiers) == 1 and specifiers[0].operator == "==", f"not pinned: {line}"
        found[canonicalize_name(requirement.name)] = specifiers[0].version
    return found
