"""docker/: the compose file and Dockerfiles, checked by parsing them (no Docker engine).

The runner's isolation (architecture "Shape", reference "Isolation of the runner")
is asserted property by property on docker/compose.yaml: no published port,
read-only root, no capabilities, no Docker socket or host mount, PID/memory/CPU
limits, non-root, no database or resource secrets, reachable networks. Each check
is a function returning its problems; the real file must give none, and
test_it_notices_each_lockdown_property_removed proves every check fails when its
property is taken away. Every service starts its Procfile line unchanged.
"""

from __future__ import annotations

import ast
import copy
import importlib.metadata
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.conf import settings
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
DOCKER = ROOT / "docker"
COMPOSE = DOCKER / "compose.yaml"
PROCFILE = ROOT / "Procfile"
GATEWAY_DOCKERFILE = DOCKER / "Dockerfile.gateway"
RUNNER_DOCKERFILE = DOCKER / "Dockerfile.runner"
RUNNER_REQUIREMENTS = DOCKER / "requirements-runner.txt"

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
GATEWAY_SECRETS = ["DATABASE_URL", "POSTGRES_PASSWORD", "DJANGO_SECRET_KEY", "postgres://"]
# What the runner image may copy from the build context.
RUNNER_COPY_ALLOWED = {"runner", "contracts", "docker/requirements-runner.txt",
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


# ---------------------------------------------------------------------------
# The runner's lockdown, one check per property


def runner_port_problems(compose: dict[str, Any]) -> list[str]:
    runner = service(compose, "runner")
    problems = []
    if runner.get("ports"):
        problems.append(f"runner publishes ports {runner['ports']}")
    if runner.get("network_mode") == "host":
        problems.append("runner uses the host's network")
    return problems


def runner_read_only_problems(compose: dict[str, Any]) -> list[str]:
    runner = service(compose, "runner")
    problems = [] if runner.get("read_only") is True else ["runner's root filesystem is writable"]
    for mount in runner.get("tmpfs") or []:
        target = str(mount).split(":", 1)[0]
        if target != "/tmp":
            problems.append(f"runner has a writable tmpfs at {target}")
    return problems


def runner_capability_problems(compose: dict[str, Any]) -> list[str]:
    runner = service(compose, "runner")
    problems = []
    if [str(cap).upper() for cap in runner.get("cap_drop") or []] != ["ALL"]:
        problems.append(f"runner does not drop ALL capabilities: {runner.get('cap_drop')}")
    if runner.get("cap_add"):
        problems.append(f"runner adds capabilities {runner['cap_add']}")
    if runner.get("privileged"):
        problems.append("runner is privileged")
    if "no-new-privileges:true" not in (runner.get("security_opt") or []):
        problems.append("runner may gain privileges (no-new-privileges:true missing)")
    return problems


def docker_socket_problems(compose: dict[str, Any]) -> list[str]:
    problems = []
    for name, svc in compose["services"].items():
        for mount in volume_entries(svc):
            if "docker.sock" in str(mount.get("source", "")) or "/var/run/docker" in str(
                    mount.get("source", "")):
                problems.append(f"{name} mounts the Docker socket")
        if "docker.sock" in yaml.safe_dump(svc):
            problems.append(f"{name} mentions docker.sock")
    return problems


def runner_host_mount_problems(compose: dict[str, Any]) -> list[str]:
    runner = service(compose, "runner")
    problems = [f"runner mounts {mount}" for mount in volume_entries(runner)]
    for key in ("devices", "volumes_from", "secrets", "configs", "env_file"):
        if runner.get(key):
            problems.append(f"runner has {key}: {runner[key]}")
    if runner.get("pid") == "host" or runner.get("ipc") == "host":
        problems.append("runner shares the host's PID or IPC namespace")
    return problems


def runner_limit_problems(compose: dict[str, Any]) -> list[str]:
    runner = service(compose, "runner")
    problems = []
    pids = limit(runner, "pids_limit", "pids")
    if not isinstance(pids, int) or pids <= 0:
        problems.append(f"runner has no PID limit ({pids!r})")
    memory = limit(runner, "mem_limit", "memory")
    if memory is None or memory_bytes(memory) <= 0:
        problems.append(f"runner has no memory limit ({memory!r})")
    cpus = limit(runner, "cpus", "cpus")
    if cpus is None or float(cpus) <= 0:
        problems.append(f"runner has no CPU limit ({cpus!r})")
    return problems


def runner_user_problems(compose: dict[str, Any]) -> list[str]:
    user = str(service(compose, "runner").get("user") or "")
    name = user.split(":", 1)[0]
    if not name or name in {"0", "root"}:
        return [f"runner runs as root (user: {user!r})"]
    return []


def runner_secret_problems(compose: dict[str, Any]) -> list[str]:
    env = env_of(service(compose, "runner"))
    problems = [f"runner gets {key}" for key in sorted(set(env) - RUNNER_ENV_ALLOWED)]
    for key, value in env.items():
        problems.extend(f"runner's {key} carries {secret}"
                        for secret in GATEWAY_SECRETS if secret in value)
    return problems


def runner_network_problems(compose: dict[str, Any]) -> list[str]:
    runner_networks = networks_of(service(compose, "runner"))
    problems = []
    for name in sorted(runner_networks):
        declared = (compose.get("networks") or {}).get(name) or {}
        if declared.get("internal") is not True:
            problems.append(f"runner's network {name} is not internal (reaches outside)")
    reachable = {other for other, svc in compose["services"].items()
                 if other != "runner" and networks_of(svc) & runner_networks}
    wanted = {"redis", "internal"}
    if reachable - wanted:
        problems.append(f"runner reaches {sorted(reachable - wanted)}")
    if wanted - reachable:
        problems.append(f"runner cannot reach {sorted(wanted - reachable)}")
    if networks_of(service(compose, "postgres")) & runner_networks:
        problems.append("runner shares a network with postgres")
    return problems


LOCKDOWN_CHECKS: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "ports": runner_port_problems,
    "read_only": runner_read_only_problems,
    "capabilities": runner_capability_problems,
    "docker_socket": docker_socket_problems,
    "host_mounts": runner_host_mount_problems,
    "limits": runner_limit_problems,
    "user": runner_user_problems,
    "secrets": runner_secret_problems,
    "networks": runner_network_problems,
}


def test_it_publishes_no_runner_port() -> None:
    assert runner_port_problems(load_compose()) == []


def test_it_gives_the_runner_a_read_only_root() -> None:
    assert runner_read_only_problems(load_compose()) == []


def test_it_drops_every_runner_capability() -> None:
    assert runner_capability_problems(load_compose()) == []


def test_it_mounts_the_docker_socket_nowhere() -> None:
    assert "docker.sock" not in COMPOSE.read_text(encoding="utf-8")
    assert docker_socket_problems(load_compose()) == []


def test_it_mounts_nothing_of_the_host_into_the_runner() -> None:
    assert runner_host_mount_problems(load_compose()) == []


def test_it_limits_runner_pids_memory_and_cpus() -> None:
    assert runner_limit_problems(load_compose()) == []


def test_it_runs_the_runner_as_a_non_root_user() -> None:
    assert runner_user_problems(load_compose()) == []


def test_it_gives_the_runner_no_database_or_resource_secrets() -> None:
    assert runner_secret_problems(load_compose()) == []
    assert "KIONGA_DESIGNER_RUNNER_TOKEN" in env_of(service(load_compose(), "runner"))


def test_it_keeps_the_runner_off_the_database_network() -> None:
    assert runner_network_problems(load_compose()) == []


MUTATIONS: dict[str, Callable[[dict[str, Any]], None]] = {
    "ports": lambda runner: runner.update(ports=["9100:9100"]),
    "read_only": lambda runner: runner.pop("read_only"),
    "capabilities": lambda runner: runner.pop("cap_drop"),
    "docker_socket": lambda runner: runner.update(
        volumes=["/var/run/docker.sock:/var/run/docker.sock"]),
    "host_mounts": lambda runner: runner.update(volumes=["./:/srv/host"]),
    "limits": lambda runner: runner.pop("pids_limit"),
    "user": lambda runner: runner.pop("user"),
    "secrets": lambda runner: runner["environment"].update(DATABASE_URL="postgres://x@postgres/db"),
    "networks": lambda runner: runner.update(networks=["runner", "backend"]),
}
EXTRA_MUTATIONS: list[tuple[str, Callable[[dict[str, Any]], None]]] = [
    ("read_only", lambda runner: runner.update(tmpfs=["/app:size=1m"])),
    ("capabilities", lambda runner: runner.update(cap_add=["SYS_ADMIN"])),
    ("capabilities", lambda runner: runner.pop("security_opt")),
    ("limits", lambda runner: runner.pop("mem_limit")),
    ("limits", lambda runner: runner.pop("cpus")),
    ("user", lambda runner: runner.update(user="0:0")),
    ("secrets", lambda runner: runner["environment"].update(
        KIONGA_AGENT_DESIGNER_RUNNER_TOKEN="x")),
    ("secrets", lambda runner: runner["environment"].update(
        REDIS_URL="redis://redis/0?pw=${POSTGRES_PASSWORD}")),
    ("networks", lambda runner: runner.update(networks=["edge"])),
    ("networks", lambda runner: runner.update(networks=["backend"])),
    ("networks", lambda runner: runner.pop("networks")),
    ("ports", lambda runner: runner.update(network_mode="host")),
]


@pytest.mark.parametrize(
    ("check", "mutate"),
    [*MUTATIONS.items(), *EXTRA_MUTATIONS],
    ids=[*MUTATIONS, *(f"{name}-{index}" for index, (name, _) in enumerate(EXTRA_MUTATIONS))],
)
def test_it_notices_each_lockdown_property_removed(
        check: str, mutate: Callable[[dict[str, Any]], None]) -> None:
    # Guards the guards: each check passes on the real file and fails once its
    # property is gone, so the tests above cannot pass trivially.
    compose = load_compose()
    assert LOCKDOWN_CHECKS[check](compose) == []
    broken = copy.deepcopy(compose)
    mutate(broken["services"]["runner"])
    assert LOCKDOWN_CHECKS[check](broken) != []


def test_it_covers_every_lockdown_check_with_a_mutation() -> None:
    assert set(MUTATIONS) == set(LOCKDOWN_CHECKS)


# ---------------------------------------------------------------------------
# Listeners, commands, start order


def test_it_does_not_publish_the_internal_listener() -> None:
    compose = load_compose()
    internal = service(compose, "internal")
    assert not internal.get("ports")
    assert internal.get("network_mode") is None
    assert env_of(service(compose, "gateway"))["KIONGA_AGENT_DESIGNER_CALLBACK_URL"] == (
        "http://internal:8087/api/v1")


def test_it_publishes_the_public_listener_on_8000() -> None:
    ports = service(load_compose(), "gateway").get("ports") or []
    targets = [port["target"] if isinstance(port, dict) else int(str(port).rsplit(":", 1)[-1])
               for port in ports]
    assert targets == [8000]


def test_it_publishes_nothing_but_the_public_listener() -> None:
    compose = load_compose()
    published = sorted(name for name, svc in compose["services"].items() if svc.get("ports"))
    assert published == ["gateway"]


@pytest.mark.parametrize("process", PROCFILE_SERVICES)
def test_it_starts_each_process_with_its_procfile_line(process: str) -> None:
    lines = procfile()
    assert process in lines, f"the Procfile has no {process} line"
    command = service(load_compose(), process).get("command")
    assert unwrap_command(command) == lines[process]
    # A bare `$` would be filled in by compose from the host's environment when the
    # file is read; `$$` leaves it to the container's shell, as the Procfile means.
    raw = command if isinstance(command, str) else " ".join(str(part) for part in command or [])
    assert "$" not in raw.replace("$$", ""), raw


def test_it_has_a_service_for_every_procfile_line() -> None:
    # A new Procfile process must be added to docker/ (and to PROCFILE_SERVICES).
    assert set(procfile()) <= set(PROCFILE_SERVICES)
    assert set(procfile()) <= set(load_compose()["services"])


@pytest.mark.parametrize("dockerfile", list(IMAGE_DEFAULTS), ids=lambda path: path.name)
def test_it_starts_each_image_with_its_procfile_line_by_default(dockerfile: Path) -> None:
    cmds = [arguments for keyword, arguments in final_stage(dockerfile) if keyword == "CMD"]
    assert cmds, f"{dockerfile.name} has no CMD"
    command = yaml.safe_load(cmds[-1])  # JSON (exec) form is valid YAML
    process = IMAGE_DEFAULTS[dockerfile]
    assert unwrap_command(command) == procfile().get(process), f"{dockerfile.name} CMD"


def test_it_migrates_once_before_any_gateway_process() -> None:
    compose = load_compose()
    migrate = service(compose, "migrate")
    assert unwrap_command(migrate["command"]) == ".venv/bin/python manage.py migrate --noinput"
    assert str(migrate.get("restart")) == "no"
    for name in GATEWAY_PROCESSES[1:]:
        depends = service(compose, name).get("depends_on") or {}
        assert depends.get("migrate") == {"condition": "service_completed_successfully"}, name
        assert depends.get("postgres") == {"condition": "service_healthy"}, name


def test_it_configures_the_gateway_for_the_runner() -> None:
    env = env_of(service(load_compose(), "gateway"))
    assert env["KIONGA_AGENT_DESIGNER_RUNNER_URL"] == "http://runner:9100"
    assert env["DATABASE_URL"].startswith("postgres://")
    assert env["REDIS_URL"] == env_of(service(load_compose(), "runner"))["REDIS_URL"]
    for name in ("MLAIOPS_LLM_BACKEND", "MLAIOPS_LLM_MODEL", "MLAIOPS_LLM_BASE_URL",
                 "KIONGA_DESIGNER_MAX_RUNS"):
        assert name in env, name


def test_it_gives_both_sides_the_same_required_runner_token() -> None:
    compose = load_compose()
    gateway_token = env_of(service(compose, "gateway"))["KIONGA_AGENT_DESIGNER_RUNNER_TOKEN"]
    runner_token = env_of(service(compose, "runner"))["KIONGA_DESIGNER_RUNNER_TOKEN"]
    assert gateway_token == runner_token
    assert re.fullmatch(r"\$\{KIONGA_RUNNER_TOKEN:\?[^}]*\}", runner_token), runner_token


def test_it_requires_every_secret_from_the_environment() -> None:
    # `${NAME:?message}`: compose refuses to start without it; never a default value.
    for name, svc in load_compose()["services"].items():
        for key, value in env_of(svc).items():
            if SECRET_NAME.search(key):
                assert re.fullmatch(r"\$\{[A-Z_]+:\?[^}]*\}", value), f"{name}: {key}={value}"


@pytest.mark.parametrize("name", ["postgres", "redis", "gateway", "internal"])
def test_it_checks_the_health_of_each_server(name: str) -> None:
    healthcheck = service(load_compose(), name).get("healthcheck") or {}
    assert healthcheck.get("test") and not healthcheck.get("disable"), name


def test_it_checks_the_runner_health_with_its_token() -> None:
    healthchecks = [arguments for keyword, arguments in final_stage(RUNNER_DOCKERFILE)
                    if keyword == "HEALTHCHECK"]
    assert healthchecks and "--bearer-env KIONGA_DESIGNER_RUNNER_TOKEN" in healthchecks[-1]
    assert "/health" in healthchecks[-1]
    assert not (service(load_compose(), "runner").get("healthcheck") or {}).get("disable")


def test_it_stores_data_on_named_volumes() -> None:
    compose = load_compose()
    for name in ("postgres", "redis", "beat"):
        mounts = volume_entries(service(compose, name))
        assert mounts and all(mount["type"] == "volume" for mount in mounts), name
        assert {mount["source"] for mount in mounts} <= set(compose.get("volumes") or {}), name


def test_it_keeps_postgres_inside_the_backend_network() -> None:
    compose = load_compose()
    networks = compose["networks"]
    assert networks_of(service(compose, "postgres")) == {"backend"}
    assert networks["backend"].get("internal") is True
    assert not service(compose, "postgres").get("ports")
    assert not service(compose, "redis").get("ports")


# ---------------------------------------------------------------------------
# Images


@pytest.mark.parametrize("dockerfile", [GATEWAY_DOCKERFILE, RUNNER_DOCKERFILE],
                         ids=lambda path: path.name)
def test_it_runs_each_image_as_a_non_root_user(dockerfile: Path) -> None:
    users = [arguments for keyword, arguments in final_stage(dockerfile) if keyword == "USER"]
    assert users, f"{dockerfile.name} has no USER"
    uid = users[-1].split(":", 1)[0]
    assert uid.isdigit() and int(uid) != 0, users[-1]


@pytest.mark.parametrize("dockerfile", [GATEWAY_DOCKERFILE, RUNNER_DOCKERFILE],
                         ids=lambda path: path.name)
def test_it_builds_each_image_from_python_slim(dockerfile: Path) -> None:
    bases = [arguments.split()[0] for keyword, arguments in dockerfile_instructions(dockerfile)
             if keyword == "FROM"]
    assert bases and all(base == "python:3.11-slim" for base in bases), bases


@pytest.mark.parametrize("dockerfile", [GATEWAY_DOCKERFILE, RUNNER_DOCKERFILE],
                         ids=lambda path: path.name)
def test_it_bakes_no_secret_into_an_image(dockerfile: Path) -> None:
    for keyword, arguments in dockerfile_instructions(dockerfile):
        if keyword in {"ENV", "ARG", "LABEL"}:
            assert not SECRET_NAME.search(arguments), f"{dockerfile.name}: {keyword} {arguments}"
    assert not {".env", ".git"} & set(context_copies(dockerfile_instructions(dockerfile)))


def test_it_keeps_django_out_of_the_runner_image() -> None:
    sources = context_copies(dockerfile_instructions(RUNNER_DOCKERFILE))
    assert set(sources) <= RUNNER_COPY_ALLOWED, sources
    assert {"runner", "contracts"} <= set(sources)
    assert not set(sources) & DJANGO_SIDE
    assert "requirements.txt" not in sources
    installed = set(pins(RUNNER_REQUIREMENTS))
    forbidden = {"django", "djangorestframework", "psycopg", "psycopg-binary", "channels",
                 "channels-redis", "django-eventstream", "dj-database-url"}
    assert not installed & forbidden


def test_it_pins_the_runner_requirements_like_requirements_txt() -> None:
    gateway = pins(ROOT / "requirements.txt")
    runner = pins(RUNNER_REQUIREMENTS)
    assert runner, "empty docker/requirements-runner.txt"
    for name, version in runner.items():
        assert gateway.get(name) == version, f"{name}=={version} vs requirements.txt"


def test_it_installs_everything_the_runner_imports() -> None:
    # Every third-party module imported by runner/ or contracts/ must come from a
    # distribution in docker/requirements-runner.txt or one of their dependencies.
    needed = third_party_imports([ROOT / "runner", ROOT / "contracts"])
    provided = dependency_closure(set(pins(RUNNER_REQUIREMENTS)))
    by_module = importlib.metadata.packages_distributions()
    missing = {module: by_module.get(module) for module in needed
               if not {canonicalize_name(dist) for dist in by_module.get(module, [])} & provided}
    assert missing == {}


def test_it_copies_every_gateway_app_into_the_gateway_image() -> None:
    sources = set(context_copies(dockerfile_instructions(GATEWAY_DOCKERFILE)))
    local_apps = {app.split(".")[0] for app in settings.INSTALLED_APPS
                  if (ROOT / app.split(".")[0]).is_dir()}
    assert local_apps, settings.INSTALLED_APPS
    assert local_apps | {"manage.py", "runner", "contracts", "requirements.txt"} <= sources
    assert "." not in sources and "tests" not in sources


def test_it_keeps_secrets_and_local_state_out_of_the_build_context() -> None:
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")}
    assert {".env", ".git", ".venv", "var"} <= ignored
    kept = {"runner", "contracts", "kionga", "requirements.txt", "docker", "manage.py"}
    assert not ignored & kept


def third_party_imports(folders: list[Path]) -> set[str]:
    roots: set[str] = set()
    for folder in folders:
        for file in folder.rglob("*.py"):
            tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    roots.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    roots.add(node.module.split(".")[0])
    first_party = {folder.name for folder in folders}
    return {root for root in roots
            if root not in sys.stdlib_module_names and root not in first_party
            and root != "__future__"}


def dependency_closure(names: set[str]) -> set[str]:
    environment = {key: str(value) for key, value in default_environment().items()}
    seen: set[str] = set()
    todo = [canonicalize_name(name) for name in names]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for line in importlib.metadata.requires(name) or []:
            requirement = Requirement(line)
            marker = requirement.marker
            if marker is None or marker.evaluate({**environment, "extra": ""}):
                todo.append(canonicalize_name(requirement.name))
    return seen
