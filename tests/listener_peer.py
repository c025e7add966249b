"""A loopback HTTP/1.1 peer standing for the internal listener in tests of the runner's
connections to it: it keeps connections alive, counts the ones it accepted, records
each request, and follows a script (answer, or drop the connection without answering
once the request was read)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.loopback import QuietHandler, serving

ANSWER = "answer"
DROP = "drop"  # read the request, then close the connection without a byte of answer
LATE = "late"  # read the request, answer only after `late_seconds` (a queued listener)


@dataclass
class Peer:
    url: str = ""
    accepted: int = 0
    closed: int = 0  # connections ended (by either side)
    # (method, path, Authorization header, connection number) of every request read.
    requests: list[tuple[str, str, str, int]] = field(default_factory=list)
    script: list[str] = field(default_factory=list)  # then ANSWER for every request
    answer: dict[str, Any] = field(default_factory=lambda: {"documents": []})
    lock: threading.Lock = field(default_factory=threading.Lock)
    late_seconds: float = 0.0

    def next_action(self) -> str:
        with self.lock:
            return self.script.pop(0) if self.script else ANSWER


@contextmanager
def kept_alive_peer(idle_seconds: float = 30.0, script: list[str] | None = None,
                    late_seconds: float = 0.0) -> Iterator[Peer]:
    """The peer on a free port (`url` ends in /api/v1); a connection idle for
    `idle_seconds` is closed by the peer, as uvicorn closes it after its keep-alive."""
    peer = Peer(script=list(script or []), late_seconds=late_seconds)

    class Handler(QuietHandler):
        protocol_version = "HTTP/1.1"
        timeout = idle_seconds

        def setup(self) -> None:
            super().setup()
            with peer.lock:
                peer.accepted += 1
                self.number = peer.accepted

        def finish(self) -> None:
            super().finish()
            with peer.lock:
                peer.closed += 1

        def _handle(self) -> None:
            self.read_body()
            peer.requests.append((self.command, self.path,
                                  self.headers.get("Authorization", ""), self.number))
            action = peer.next_action()
            if action == DROP:
                self.close_connection = True
                return
            if action == LATE:
                time.sleep(peer.late_seconds)
            self.answer(200, peer.answer)

        do_GET = do_POST = _handle

    with serving(Handler) as url:
        peer.url = f"{url}/api/v1"
        yield peer
