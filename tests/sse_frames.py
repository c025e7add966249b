"""Server-Sent Events frames from the lines of a stream, for the tests' and the
benchmarks' clients: one parser, fed a line at a time (sync or async readers alike)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

Frame = tuple[str, dict[str, Any], bool]  # (event kind, its JSON data, whether it had an id)


class FrameParser:
    def __init__(self) -> None:
        self.kind, self.data, self.has_id = "message", "", False

    def feed(self, line: str) -> Frame | None:
        """The frame this line completes (a blank line after data), or None."""
        frame: Frame | None = None
        if line == "":
            if self.data:
                frame = (self.kind, json.loads(self.data), self.has_id)
            self.kind, self.data, self.has_id = "message", "", False
        elif line.startswith("event: "):
            self.kind = line[7:]
        elif line.startswith("data: "):
            self.data += line[6:]
        elif line.startswith("id: "):
            self.has_id = True
        return frame


def frames(lines: Iterator[str]) -> Iterator[Frame]:
    parser = FrameParser()
    for line in lines:
        if (frame := parser.feed(line)) is not None:
            yield frame
