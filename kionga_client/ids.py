"""IDs as a person types them: a full ID, or a unique prefix of one (as git takes a short
hash), resolved against the listing the ID would appear in.

A full ID is used as given (no listing is read). A prefix needs `MIN_PREFIX` characters;
one that matches no listed ID is that kind's not-found error, one that matches several is
USAGE naming them. Listings are the gateway's (a design's latest runs and evaluations,
not all of them), so an old run or evaluation needs its full ID."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterable

from kionga_client.errors import KiongaError
from kionga_client.gateway import Gateway

MIN_PREFIX = 4  # git's shortest abbreviation
SHOWN_MATCHES = 5
_ID_TEXT = re.compile(r"^[0-9a-fA-F-]+$")


def full_id(text: str) -> str | None:
    """The canonical form of a full ID (any case, with or without dashes), else None."""
    try:
        return str(uuid.UUID(text))
    except ValueError:
        return None


def looks_like_id(text: str) -> bool:
    """Whether `text` could be (the start of) an ID rather than, say, a file name."""
    return full_id(text) is not None or (len(text) >= MIN_PREFIX
                                         and _ID_TEXT.match(text) is not None)


def pick(text: str, listed: Callable[[], Iterable[str]], what: str, not_found: str) -> str:
    """The ID `text` is, or the one of `listed()` (read only for a prefix) it starts;
    else the error that says why not."""
    found = full_id(text)
    if found is not None:
        return found
    if len(text) < MIN_PREFIX:
        raise KiongaError("USAGE", f"{text!r} is too short for a {what} ID: give its full ID "
                          f"or at least {MIN_PREFIX} of its first characters.")
    prefix = text.lower()
    matches = sorted({k for k in listed() if k.startswith(prefix)})
    if not matches:
        raise KiongaError(not_found, f"No {what} ID starts with {text!r}.")
    if len(matches) > 1:
        shown = ", ".join(matches[:SHOWN_MATCHES]) + (", ..." if len(matches) > SHOWN_MATCHES
                                                      else "")
        raise KiongaError("USAGE", f"{text!r} is ambiguous: {len(matches)} {what} IDs start "
                          f"with it ({shown}).", hint="Give more characters of the ID.",
                          data={"matches": matches})
    return matches[0]


def design(gw: Gateway, text: str) -> str:
    """The design `text` names (its ID or a unique prefix of it)."""
    return pick(text, lambda: [str(d["id"]) for d in gw.request("GET", "/agent-designs")[
        "designs"]], "design", "DESIGN_NOT_FOUND")


def run(gw: Gateway, text: str, design_id: str | None) -> tuple[str, str | None]:
    """(the run's ID, its design's when a prefix had to be looked up) for `text` (a run's
    ID or a unique prefix), among `design_id`'s runs or, without it, all of yours."""
    owner: dict[str, str] = {}

    def listed() -> list[str]:
        designs = ([design_id] if design_id else
                   [str(d["id"]) for d in gw.request("GET", "/agent-designs")["designs"]])
        for listed_design in designs:
            for found in gw.request("GET", f"/agent-designs/{listed_design}/runs",
                                    not_found="DESIGN_NOT_FOUND")["runs"]:
                owner[str(found["id"])] = listed_design
        return list(owner)

    run_id = pick(text, listed, "run", "RUN_NOT_FOUND")
    return run_id, owner.get(run_id, design_id)


def evaluation(gw: Gateway, text: str, design_id: str) -> str:
    """The evaluation of `design_id` that `text` names (its ID or a unique prefix)."""
    return pick(text, lambda: [str(e["id"]) for e in gw.request(
        "GET", f"/agent-designs/{design_id}/evaluations",
        not_found="DESIGN_NOT_FOUND")["evaluations"]], "evaluation", "EVALUATION_NOT_FOUND")
