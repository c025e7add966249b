"""The worker refuses to start on a bad configuration: non-zero exit, a clear message."""

from __future__ import annotations

import shlex
import socket
import subprocess

import pytest

from tests.runner_process.runner_kit import ROOT, free_port, worker_command, worker_env


def start(**env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(worker_command(), cwd=ROOT, env=worker_env(free_port(), **env),
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize("token", ["", "too-short-token"])
def test_it_refuses_to_start_with_a_short_token(token: str) -> None:
    done = start(KIONGA_DESIGNER_RUNNER_TOKEN=token)
    assert done.returncode != 0
    assert "refusing to start: KIONGA_DESIGNER_RUNNER_TOKEN must be set to at least 16" \
        in done.stderr
    assert "ready" not in done.stdout + done.stderr


def test_it_refuses_to_start_from_the_procfile_line() -> None:
    lines = (ROOT / "Procfile").read_text().splitlines()
    command = next(line.partition(":")[2] for line in lines if line.startswith("runner:"))
    done = subprocess.run(shlex.split(command), cwd=ROOT, capture_output=True, text=True,
                          env=worker_env(free_port(), KIONGA_DESIGNER_RUNNER_TOKEN="short"),
                          timeout=60, check=False)
    assert done.returncode != 0
    assert "refusing to start: KIONGA_DESIGNER_RUNNER_TOKEN" in done.stderr


def test_it_refuses_to_start_with_a_bad_integer() -> None:
    done = start(KIONGA_DESIGNER_MAX_RUNS="lots")
    assert done.returncode != 0
    assert "KIONGA_DESIGNER_MAX_RUNS must be an integer" in done.stderr


def test_it_refuses_to_start_when_its_port_is_taken() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = start(KIONGA_DESIGNER_PORT=str(port))
    assert done.returncode != 0
    assert f"cannot listen on 127.0.0.1:{port} (KIONGA_DESIGNER_PORT)" in done.stderr
