"""docker/: the compose file and Dockerfiles, checked by parsing them (no Docker engine).

The runner's isolation (architecture "Shape", reference "Isolation of the runner")
is asserted property by property on docker/compose.yaml: no published port,
read-only root, no capabilities, no Docker socket or host mount, PID/memory/CPU
limits, non-root, no database or resource secrets, reachable networks. Each check
is a function returning its problems; the real file must give none, and
test_it_notices_each_lockdown_property_removed proves every check fails when its
property is taken away. Every service starts its Procfile line unchanged. Redis runs
with a memory limit, never evicts (docs/decisions/redis-memory.md) and has room above
the limit in its container.
"""
from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from runner import protocol
from tests.docker_kit import (
    COMPOSE,
    GATEWAY_PROCESSES,
    GATEWAY_SECRETS,
    IMAGE_DEFAULTS,
    PROCFILE_SERVICES,
    ROOT,
    RUNNER_DOCKERFILE,
    RUNNER_ENV_ALLOWED,
    SECRET_NAME,
    env_of,
    final_stage,
    limit,
    load_compose,
    memory_bytes,
    networks_of,
    procfile,
    redis_settings,
    service,
    unwrap_command,
    volume_entries,
    with_defaults,
)

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
    ("secrets", lambda runner: runner["environment"].update(
        REDIS_URL="redis://gateway:${REDIS_GATEWAY_PASSWORD:?x}@redis:6379/0")),
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
    # One Redis, one user each (docker/redis-users.acl; tests/test_docker_redis_acl.py).
    assert env["REDIS_URL"].startswith("redis://gateway:${REDIS_GATEWAY_PASSWORD:?")
    assert env["REDIS_URL"].endswith("@redis:6379/0")
    runner_url = env_of(service(load_compose(), "runner"))["REDIS_URL"]
    assert runner_url.startswith("redis://runner:${REDIS_RUNNER_PASSWORD:?")
    assert runner_url.endswith("@redis:6379/0")
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


def test_the_listeners_believe_x_forwarded_for_only_from_the_trusted_proxies() -> None:
    # uvicorn's own proxy handling is off (it trusts 127.0.0.1 unless told otherwise);
    # kionga.proxies applies KIONGA_TRUSTED_PROXIES, which every gateway process gets
    # from the host's environment, empty (trust none) by default.
    for process in ("gateway", "internal"):
        assert "--no-proxy-headers" in procfile()[process].split(), process
    env = env_of(service(load_compose(), "gateway"))
    assert env["KIONGA_TRUSTED_PROXIES"] == "${KIONGA_TRUSTED_PROXIES:-}"
    demo = (ROOT / "bin" / "demo").read_text(encoding="utf-8")
    assert 'export KIONGA_TRUSTED_PROXIES="${KIONGA_TRUSTED_PROXIES-}"' in demo
    assert "honcho start -f Procfile" in demo  # the demo runs the Procfile's lines


# ---------------------------------------------------------------------------
# Redis's memory


def redis_memory_problems(compose: dict[str, Any]) -> list[str]:
    settings = redis_settings(compose)
    problems = []
    if settings.get("maxmemory-policy") != protocol.REDIS_MAXMEMORY_POLICY:
        problems.append(f"redis may evict keys: {settings.get('maxmemory-policy')!r}")
    maxmemory = memory_bytes(settings.get("maxmemory") or 0)
    if maxmemory <= 0:
        problems.append("redis has no maxmemory")
    container = limit(service(compose, "redis"), "mem_limit", "memory")
    if container is None or memory_bytes(with_defaults(container)) < 1.5 * maxmemory:
        problems.append(f"redis's container limit {container!r} leaves no room above "
                        f"maxmemory (the append-only rewrite forks)")
    return problems


def test_it_bounds_redis_memory_and_never_evicts() -> None:
    assert redis_memory_problems(load_compose()) == []
    assert redis_settings(load_compose())["maxmemory"] == "512mb"


def _redis_command(compose: dict[str, Any], drop: str = "", **replace: str) -> None:
    redis = service(compose, "redis")
    argv = list(redis["command"])
    for option, value in replace.items():
        argv[argv.index(f"--{option.replace('_', '-')}") + 1] = value
    if drop:
        at = argv.index(drop)
        del argv[at:at + 2]
    redis["command"] = argv


REDIS_MUTATIONS: dict[str, Callable[[dict[str, Any]], None]] = {
    "evicting": lambda c: _redis_command(c, maxmemory_policy="allkeys-lru"),
    "volatile": lambda c: _redis_command(c, maxmemory_policy="volatile-lru"),
    "unlimited": lambda c: _redis_command(c, drop="--maxmemory"),
    "no container limit": lambda c: service(c, "redis").pop("mem_limit"),
    "no room above": lambda c: service(c, "redis").update(mem_limit="512m"),
}


@pytest.mark.parametrize("mutate", list(REDIS_MUTATIONS.values()), ids=list(REDIS_MUTATIONS))
def test_it_notices_redis_memory_settings_removed(
        mutate: Callable[[dict[str, Any]], None]) -> None:
    broken = copy.deepcopy(load_compose())
    mutate(broken)
    assert redis_memory_problems(broken) != []
