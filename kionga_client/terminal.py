"""Text for a person's terminal, whoever wrote it.

Names, messages and run outputs come from the gateway, and through it from anyone in a
project (or a hostile gateway). Printed raw, an escape sequence in them could recolour,
clear or retitle the terminal, hide text, forge a link (OSC 8) or reorder a line (bidi
overrides), and rich would read `[red]` or `:smile:` in them as its own markup.
`SafeConsole` is the one renderer of human output: it reads no markup or emoji codes,
and every string and every segment it renders passes `terminal_safe`. The `--json`
envelope is not human output and never passes here: it keeps the exact text."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

# Whole escape sequences, 7-bit (ESC ...) and 8-bit (a C1 introducer): strings (OSC, DCS,
# SOS, PM, APC) up to their terminator, CSI up to its final byte, then any other ESC
# with its intermediates and final. An unfinished one loses its introducer only.
_SEQUENCE = re.compile(
    r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
    r"|(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]"
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]")
KEPT_CONTROLS = "\n\t"
# Bidirectional formatting characters: they can make a line read other than it is.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_DROPPED: dict[int, str | None] = {
    **{code: None for code in [*range(0x00, 0x20), *range(0x7f, 0xa0)]
       if chr(code) not in KEPT_CONTROLS},
    **{ord(char): None for char in BIDI_CONTROLS},
    # A lone surrogate (JSON may carry one) cannot be written to a UTF-8 terminal.
    **{code: "\ufffd" for code in range(0xd800, 0xe000)},
}


def terminal_safe(text: str) -> str:
    """`text` without escape sequences, C0/C1 controls (but newline and tab) and bidi
    controls, and with any lone surrogate as U+FFFD."""
    return _SEQUENCE.sub("", text).translate(_DROPPED)


class SafeConsole(Console):
    """A rich console that prints text as written: no markup, no emoji codes, no
    highlighting, and nothing a terminal would obey rather than show."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(markup=False, emoji=False, highlight=False, **kwargs)

    def render_str(self, text: str, **kwargs: Any) -> Text:
        # Before rich's Text drops BEL (an OSC's end) and measures widths: a whole
        # sequence goes, and tables are laid out for the text people will see.
        return super().render_str(terminal_safe(text), **kwargs)

    def render(self, renderable: RenderableType,
               options: ConsoleOptions | None = None) -> Iterable[Segment]:
        # Every print, table cell, title and prompt is rendered here (nested renderables
        # come back through it, so a segment may be cleaned twice: that changes nothing).
        for segment in super().render(renderable, options):
            if segment.control:  # rich's own cursor and screen codes, never text
                yield segment
                continue
            text = terminal_safe(segment.text)
            yield segment if text == segment.text else Segment(text, segment.style)
