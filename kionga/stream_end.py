"""A stream's last chunk is sent with the end of the answer (one ASGI message, one
write): a client following a run gets its last event and the end of the answer in
one read, not two.

A stream marks its last chunk as `LastChunk`; the handlers that serve event streams
(kionga.loop_handler's, for the internal listener and the public one's run streams)
send its bytes as the answer's last body message and close the stream. Anywhere else
(Django's test client) it is the bytes it holds.
"""

from __future__ import annotations


class LastChunk(bytes):
    """A stream's last chunk: sent together with the end of the answer."""
