"""`kionga` as the installed console script: it is on the venv's PATH, and Ctrl+C while
following a run ends the command with 130 and a hint naming the run (the run goes on)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from contracts.schemas import schema_errors
from runs.models import Run
from tests.conftest import Api
from tests.e2e.cli_kit import Kionga, graph_file
from tests.e2e.helpers import approval_graph, wait_for
from tests.stack import VENV_BIN, Stack

pytestmark = pytest.mark.django_db(transaction=True)


def default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_while_following_exits_130_with_the_run_id(stack: Stack, api: Api, alice: Any,
                                                          tmp_path: Path) -> None:
    token = api.token_for(alice)
    design_id = Kionga(stack, token)("designs", "create", "--file", graph_file(
        tmp_path, approval_graph()))["data"]["design_id"]
    env = {**os.environ, "KIONGA_URL": stack.base_url, "KIONGA_TOKEN": token}
    command = VENV_BIN / "kionga"
    assert command.is_file()  # installed by pip install -e . (bin/_setup.sh)
    # As from a person's terminal: Ctrl+C's default disposition, whatever this test
    # process inherited or was left with (an ignored SIGINT is inherited by the child,
    # and Python then never raises KeyboardInterrupt).
    process = subprocess.Popen([str(command), "run", design_id, "--input", "x", "--json"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, preexec_fn=default_sigint)
    # Following: the run waits on its approval (a person), so the command would wait too.
    run = wait_for(lambda: Run.objects.filter(design_id=design_id, status="waiting").first())
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=20)
    assert process.returncode == 130, err
    answer = json.loads(out)
    assert schema_errors("cli-envelope.v1", answer) == []
    assert answer["error"]["code"] == "INTERRUPTED" and answer["exit_code"] == 130
    assert answer["data"]["run_id"] == str(run.pk)
    assert f"kionga runs cancel {run.pk}" in answer["error"]["hint"]
    assert b"Traceback" not in err
    run.refresh_from_db()
    assert run.status == "waiting"  # Ctrl+C stops the command, not the run
