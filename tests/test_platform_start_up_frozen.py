"""Both listeners move what start-up made out of the cyclic collector's sight once their
start-up checks pass (kionga.start_checks.freeze_start_up): a full collection under
load then walks only what requests made; the internal listener, whose calls leave
nothing in reference cycles, spaces its full collections out too. A listener whose
checks fail freezes nothing.
Each listener's module runs its lifespan in a process of its own, as uvicorn runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from kionga import secret_box
from kionga.models import Project
from runner import heap
from tests.internal_listener import database_url_of_tests
from tests.stack import ROOT
from tests.test_resources_secret_keys import make_resources

pytestmark = pytest.mark.django_db(transaction=True)

LIFESPAN = """
import asyncio, gc, json, sys
import {module} as listener

sent = []

async def main():
    steps = iter([{{"type": "lifespan.startup"}}])

    async def receive():
        try:
            return next(steps)
        except StopIteration:
            await asyncio.sleep(3600)

    async def send(message):
        sent.append(message["type"])

    task = asyncio.create_task(listener.application({{"type": "lifespan"}}, receive, send))
    while not sent:
        await asyncio.sleep(0.01)
    task.cancel()

asyncio.run(main())
print(json.dumps({{"sent": sent, "frozen": gc.get_freeze_count(),
                  "full_every": gc.get_threshold()[2]}}))
"""


def started(module: str, **env: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", LIFESPAN.format(module=module)], cwd=ROOT, check=True,
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "DATABASE_URL": database_url_of_tests(), **env})
    answer: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return answer


@pytest.mark.parametrize(("module", "full_every"), [
    ("kionga.asgi", 10),  # CPython's: its ordinary requests leave objects in cycles
    ("kionga.internal_asgi", heap.FULL_COLLECTION_EVERY),  # its calls leave none
])
def test_a_started_listener_has_frozen_what_start_up_made(module: str, full_every: int) -> None:
    answer = started(module)
    assert answer["sent"] == ["lifespan.startup.complete"]
    frozen = answer["frozen"]
    assert isinstance(frozen, int) and frozen > 50_000  # Django, the URLconf, the views
    assert answer["full_every"] == full_every


def test_a_listener_whose_checks_fail_freezes_nothing(acme: Project) -> None:
    make_resources(acme)
    # A well-formed key that opens none of the stored secrets: start-up fails.
    answer = started("kionga.asgi", KIONGA_SECRET_KEYS=secret_box.new_key())
    assert answer["sent"] == ["lifespan.startup.failed"]
    assert answer["frozen"] == 0
