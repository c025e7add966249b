"""Redaction of secrets in everything the engine shows: previews, texts, errors, output.

Three sources of secrets: literal values handed to the engine (resource secrets, the
run credential), built-in credential shapes (bearer tokens, `sk-...` keys) and the
operator's configured patterns. Everything matching becomes `[redacted]`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from contracts.registry import LIMITS

REDACTED: Final = "[redacted]"
PREVIEW_CHARS: Final = LIMITS["preview_chars"]
OUTPUT_BYTES: Final = LIMITS["output_bytes"]

# Credential shapes we always hide, whatever the configuration says.
BUILTIN_PATTERNS: Final[tuple[str, ...]] = (
    r"(?i:\bbearer\s+)[A-Za-z0-9\-._~+/]+=*",
    r"\bsk-[A-Za-z0-9][A-Za-z0-9_\-]{15,}",
    r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{10,}",
)

# How much of a streamed text is held back, beyond the last word, when configured
# patterns could match across words (see StreamRedactor).
STREAM_HOLD_CHARS: Final = 64
_LAST_WORD: Final = re.compile(r"\S+\s*$")
# Values longer than this are cut before redaction: previews only show 2,000
# characters and regexes over megabytes would cost more than the node did.
_SCAN_CHARS: Final = OUTPUT_BYTES


class Redactor:
    """Replaces every secret in a text with `[redacted]`."""

    def __init__(self, secrets: Iterable[str] = (), patterns: Iterable[str] = ()) -> None:
        literals = sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True)
        # Literal secrets with whitespace span words: streams must hold that much back.
        self.max_spaced_literal = max((len(s) for s in literals if _has_space(s)), default=0)
        self.has_patterns = any(patterns)
        # One alternation for the fixed shapes; longest literal first so a secret that
        # contains another one is hidden whole.
        fixed = [re.escape(s) for s in literals] + [f"(?:{p})" for p in BUILTIN_PATTERNS]
        self._patterns: list[re.Pattern[str]] = [re.compile("|".join(fixed))]
        # Configured patterns stay separate: merging them could renumber their groups.
        # An invalid one raises re.error here, so a run never starts half-protected.
        self._patterns.extend(re.compile(p) for p in patterns if p)

    def redact(self, text: str) -> str:
        for pattern in self._patterns:
            text = pattern.sub(REDACTED, text)
        return text

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for p in self._patterns for m in p.finditer(text) if m.end() > m.start()]

    def preview(self, text: str) -> str:
        """Redacted and cut to 2,000 characters."""
        if len(text) > _SCAN_CHARS:
            text = text[:_SCAN_CHARS]
        return self.redact(text)[:PREVIEW_CHARS]

    def output(self, text: str) -> str:
        """Redacted and cut to 64 KiB of UTF-8 (never in the middle of a character)."""
        return truncate_bytes(self.redact(text), OUTPUT_BYTES)


def truncate_bytes(text: str, limit: int) -> str:
    # Fast path: a str of n code points needs at most 4n bytes.
    if len(text) * 4 <= limit:
        return text
    raw = text.encode("utf-8")
    if len(raw) <= limit:
        return text
    return raw[:limit].decode("utf-8", errors="ignore")


class StreamRedactor:
    """Redacts a text that arrives in chunks, for node.delta events.

    A secret may be split across chunks ("sk-ab" + "cdef..."). Redacting each chunk
    alone would leak both halves, so the last word (which may still grow into a
    secret) is held back until the next word starts, and the cut never falls inside a
    match. Deltas therefore run one word behind. Secrets that span words (literals
    with spaces, configured patterns) hold back more characters. node.completed
    always carries the full redacted text; deltas are a best-effort live view.
    """

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._hold = max(redactor.max_spaced_literal,
                         STREAM_HOLD_CHARS if redactor.has_patterns else 0)
        self._raw = ""
        self._sent = 0  # characters of _raw already released

    def feed(self, chunk: str) -> str:
        self._raw += chunk
        last = _LAST_WORD.search(self._raw, self._sent)
        cut = last.start() if last else len(self._raw)
        if self._hold:
            cut = min(cut, len(self._raw) - self._hold)
        return self._release(max(self._sent, cut))

    def flush(self) -> str:
        return self._release(len(self._raw))

    def _release(self, cut: int) -> str:
        offset = self._sent
        spans = self._redactor.spans(self._raw[offset:])
        moved = True
        while moved:  # moving the cut can split another (overlapping) match
            moved = False
            for start, end in spans:
                if offset + start < cut < offset + end:
                    cut, moved = offset + start, True
        if cut <= self._sent:
            return ""
        piece = self._raw[self._sent : cut]
        self._sent = cut
        return self._redactor.redact(piece)


def _has_space(text: str) -> bool:
    return any(c.isspace() for c in text)
