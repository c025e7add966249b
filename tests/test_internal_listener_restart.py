"""A restart of the internal listener mid-run costs no run: the runner's client tries a
refused or reset connection to the listener again within its timeout. Runs of four
Kionga model nodes each (the engine with the runner's real client, an OpenAI-compatible
peer on loopback), while the listener (uvicorn) stops and comes back ~3 s later on
the same port."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from django.contrib.auth.models import User

from kionga.models import Project
from kionga.resource_models import ModelEndpoint
from tests.internal_helpers import start_run
from tests.internal_listener import free_port, internal_listener_process
from tests.model_run_kit import run_models
from tests.openai_peer import OpenAIPeer

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.allow_output]  # the refused connections are logged as retried

RUNS = 10
DOWN_SECONDS = 3.0


@pytest.mark.parametrize("stop", ["terminate", "kill"])
def test_runs_complete_across_a_listener_restart(carol: User, acme: Project,
                                                  stop: str) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}/api/v1"
    with OpenAIPeer(chunks=3, latency=0.6).serving() as peer:
        ModelEndpoint.objects.create(project=acme, key="gpt", base_url=peer.url,
                                     model_name="m")
        credentials = [start_run(carol, acme)[1] for _ in range(RUNS)]
        ends: list[list[dict[str, Any]]] = []

        async def all_runs() -> None:
            ends.extend(await asyncio.gather(*[run_models(base, credential, nodes=4)
                                               for credential in credentials]))

        runs = threading.Thread(target=asyncio.run, args=(all_runs(),), daemon=True)
        with internal_listener_process(port) as (_url, process):
            runs.start()
            time.sleep(1.0)  # every run is in its first or second model call
            if stop == "kill":
                process.kill()  # streams in flight are cut: the node's retry takes them
        stopped = time.monotonic()
        time.sleep(DOWN_SECONDS)
        with internal_listener_process(port):
            assert time.monotonic() - stopped >= DOWN_SECONDS
            runs.join(timeout=60)
    assert len(ends) == RUNS
    assert [events[-1]["type"] for events in ends] == ["run.completed"] * RUNS, [
        events[-1] for events in ends]
