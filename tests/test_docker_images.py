"""docker/: the images — non-root, slim, no secrets baked in, the runner without Django
and with everything it imports (checked by parsing the Dockerfiles)."""

from __future__ import annotations

import ast
import importlib.metadata
import sys
from pathlib import Path

import pytest
from django.conf import settings
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.docker_kit import (
    DJANGO_SIDE,
    GATEWAY_DOCKERFILE,
    ROOT,
    RUNNER_COPY_ALLOWED,
    RUNNER_DOCKERFILE,
    RUNNER_REQUIREMENTS,
    SECRET_NAME,
    context_copies,
    dockerfile_instructions,
    final_stage,
    pins,
)

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
    # The canvas's build stage is node's; what runs is always python:3.11-slim.
    assert bases and bases[-1] == "python:3.11-slim", bases
    assert set(bases) <= {"python:3.11-slim", "node:20-slim"}, bases


def test_it_ships_the_built_canvas_not_node_modules() -> None:
    copies = [arguments for keyword, arguments in dockerfile_instructions(GATEWAY_DOCKERFILE)
              if keyword == "COPY"]
    assert "--from=canvas /src/designer/static/designer/canvas " \
        "./designer/static/designer/canvas" in copies, copies
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    assert "**/node_modules" in ignored and "designer/static/designer/canvas" in ignored


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
    assert {"runner", "contracts", "agents"} <= set(sources)
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
    # Every third-party module imported by runner/, contracts/ or agents/ must come from a
    # distribution in docker/requirements-runner.txt or one of their dependencies.
    needed = third_party_imports([ROOT / "runner", ROOT / "contracts", ROOT / "agents"])
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
