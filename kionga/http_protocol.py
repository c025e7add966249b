"""The HTTP parser both listeners run: runner.http_head's httptools protocol (a bound
on a request's head, in bytes and in time) with the gateway's settings and error shape.

The head's bound is MAX_HEAD_BYTES; its time KIONGA_HEAD_TIMEOUT_SECONDS. A kept-alive
connection idle between requests closes after uvicorn's --timeout-keep-alive; a body is
read within KIONGA_BODY_TIMEOUT_SECONDS (kionga.http_limits). The finer limits (header
fields and their bytes, body sizes) are kionga.http_limits', after parsing. The internal
listener runs uvicorn with `--http kionga.http_protocol:BoundedHttpToolsProtocol`, the
public one with `--http kionga.http_protocol:GatewayHttpToolsProtocol`.
"""

from __future__ import annotations

import json
from typing import Final

from kionga.http_limits import MAX_HEADER_BYTES
from runner.http_head import HeadBoundHttpToolsProtocol

# The request line and every header line with their separators: the header bytes
# kionga.http_limits allows, plus room for a long URL and the line endings.
MAX_HEAD_BYTES: Final = MAX_HEADER_BYTES + 8 * 1024


class BoundedHttpToolsProtocol(HeadBoundHttpToolsProtocol):
    max_head_bytes = MAX_HEAD_BYTES

    def head_timeout(self) -> float:
        from django.conf import settings  # set up once the app is loaded

        return float(settings.KIONGA_HEAD_TIMEOUT_SECONDS)

    def error_json(self, status: int, code: str, message: str) -> bytes:
        from kionga.errors import error_body  # imports DRF: only once Django is set up

        return json.dumps(error_body(code, message)).encode()  # type: ignore[arg-type]


class GatewayHttpToolsProtocol(BoundedHttpToolsProtocol):
    """The public listener's: when the server stops gracefully (SIGTERM: a deploy, a
    scale-down), an answer still streaming is cut at once. uvicorn would wait for it to
    end, and an event stream lasts as long as its run (a person's approval: minutes), so
    the process would outlive its stop until killed. Its follower reconnects with
    Last-Event-ID to another gateway and loses nothing (the stored log first, then live).
    Other answers end as uvicorn ends them: in full. The internal listener keeps waiting
    for its streamed resource calls: a model's answer cut halfway would be a failed node."""

    def shutdown(self) -> None:
        if self.answer_streaming():
            self.close_at_once()
            return
        super().shutdown()
