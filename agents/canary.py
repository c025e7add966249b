"""A canary in the runtime: two verified versions, one chosen per turn.

During a canary (docs/decisions/canary-routing-in-the-runtime.md) the runtime holds the
agent's version and the canary's, both verified by build_native at start-up, and serves
`percent` of the turns with the canary. A turn with a session id is placed by a hash of
it (the same session always lands on the same version, and the split over sessions is
exact arithmetic, not chance); a turn without one draws at random.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from agents.native_graph import ArtifactError, NativeGraph, build_native
from contracts.agent_runtime import CANARY_MAX_PERCENT as MAX_PERCENT
from contracts.agent_runtime import CANARY_MIN_PERCENT as MIN_PERCENT

BUCKETS: Final = 100


@dataclass(frozen=True)
class Served:
    """A version the runtime serves turns with."""

    native: NativeGraph
    version_id: str

    @classmethod
    def of(cls, native: NativeGraph, artifact: Mapping[str, Any]) -> Served:
        return cls(native, str(artifact.get("version_id", "")))

    def health(self) -> dict[str, Any]:
        return {"version": self.native.version, "version_id": self.version_id,
                "content_sha256": self.native.content_sha256}


@dataclass(frozen=True)
class Canary:
    served: Served
    percent: int


def bucket_of(session_id: str) -> int:
    """The session's place in 0..99: the first 8 bytes of its SHA-256, modulo 100."""
    digest = hashlib.sha256(session_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % BUCKETS


def serves_canary(percent: int, session_id: str | None) -> bool:
    """Whether this turn goes to the canary: sticky per session, at random without one."""
    place = bucket_of(session_id) if session_id else random.randrange(BUCKETS)
    return place < percent


def load_canary(path: str) -> Canary:
    """The canary file ({"percent", "artifact"}) verified, or ArtifactError."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ArtifactError(f"the canary {path} cannot be read: {exc}") from None
    if not isinstance(document, dict) or not isinstance(document.get("artifact"), dict):
        raise ArtifactError("the canary needs {percent, artifact}")
    percent = document.get("percent")
    if (not isinstance(percent, int) or isinstance(percent, bool)
            or not MIN_PERCENT <= percent <= MAX_PERCENT):
        raise ArtifactError(f"the canary's percent must be {MIN_PERCENT} to {MAX_PERCENT}")
    try:
        native = build_native(document["artifact"])
    except ArtifactError as exc:
        raise ArtifactError(f"the canary: {exc}") from None
    return Canary(Served.of(native, document["artifact"]), percent)
