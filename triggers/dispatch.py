"""Handing a triggered turn to its agent's runtime (the task's one step)."""

from __future__ import annotations

import logging
from typing import Final

import httpx

from contracts.agent_runtime import TRIGGERED_TURNS_PATH
from triggers.firings import queued_turn
from triggers.runtime_url import runtime_url

log = logging.getLogger("kionga.triggers")
TIMEOUT: Final = 10.0


class RuntimeNotReached(Exception):
    """The runtime did not take the turn (unreachable, refusing): try again later."""


def do_hand_over(turn_id: str) -> bool:
    """True when the runtime took the turn; False when there is nothing to hand over
    (claimed already, ended, unknown); RuntimeNotReached otherwise."""
    turn = queued_turn(turn_id)
    if turn is None or turn.agent is None:
        return False
    url = runtime_url(turn.agent) + TRIGGERED_TURNS_PATH
    try:
        answer = httpx.post(url, json={"turn_id": turn_id}, timeout=TIMEOUT)
    except httpx.HTTPError as exc:
        raise RuntimeNotReached(f"{turn.agent.name}: {type(exc).__name__}") from None
    if answer.status_code == 202:
        return True
    if queued_turn(turn_id) is None:  # claimed meanwhile (a task delivered twice)
        return False
    log.warning("the runtime of %s refused turn %s: %s", turn.agent.name, turn_id,
                answer.status_code)
    raise RuntimeNotReached(f"{turn.agent.name}: {answer.status_code}")
