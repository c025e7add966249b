"""Redaction of secrets in everything the engine shows: previews, texts, errors, output.

Three sources of secrets: literal values handed to the engine (resource secrets, the
run credential), built-in credential shapes (bearer tokens, `sk-...` keys) and the
operator's configured patterns. Everything matching becomes `[redacted]`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any, Final

import re2

from contracts.registry import LIMITS
from contracts.text import PatternError, compile_re2, utf8_safe

REDACTED: Final = "[redacted]"
# Ends a text or a delta stream that was cut at TEXT_BYTES.
TRUNCATED: Final = " [truncated]"
PREVIEW_CHARS: Final = LIMITS["preview_chars"]
OUTPUT_BYTES: Final = LIMITS["output_bytes"]
TEXT_BYTES: Final = LIMITS["model_text_bytes"]
# Shorter literal "secrets" would blank out ordinary words.
MIN_SECRET_CHARS: Final = 4

# Credential shapes we always hide, whatever the configuration says (RE2 syntax;
# `[\s\p{Z}]` because RE2's `\s` is ASCII only).
BUILTIN_PATTERNS: Final[tuple[str, ...]] = (
    r"(?i:\bbearer[\s\p{Z}]+)[A-Za-z0-9\-._~+/]+=*",
    r"\bsk-[A-Za-z0-9][A-Za-z0-9_\-]{15,}",
    r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{10,}",
)

# KIONGA_SECRET_PATTERNS when it is not set (gateway and runner): API tokens, sk- keys,
# bearer values.
DEFAULT_SECRET_PATTERNS: Final[tuple[str, ...]] = (
    r"kio_[A-Za-z0-9_\-]{20,}",
    r"sk-[A-Za-z0-9_\-]{20,}",
    r"(?i)bearer\s+[A-Za-z0-9._~+/=\-]{8,}",
)


def pattern_problems(patterns: Iterable[str]) -> list[tuple[str, str]]:
    """(pattern, reason) for each pattern RE2 refuses: the gateway's system check and
    the runner's start validate with the engine the Redactor compiles with."""
    problems: list[tuple[str, str]] = []
    for pattern in patterns:
        try:
            compile_re2(pattern)
        except PatternError as exc:
            problems.append((pattern, str(exc)))
    return problems


# How much of a streamed text is held back, beyond the last word, when configured
# patterns could match across words (see StreamRedactor).
STREAM_HOLD_CHARS: Final = 64
# Values longer than this are cut before redaction: previews only show 2,000
# characters and regexes over megabytes would cost more than the node did.
_SCAN_CHARS: Final = OUTPUT_BYTES


class Redactor:
    """Replaces every secret in a text with `[redacted]`.

    One implementation for the runner's events and the gateway's upstream answers
    (kionga.upstream), with RE2 (linear time) for every pattern: the gateway
    validates KIONGA_SECRET_PATTERNS with the same `compile_re2`. `builtin=False`
    hides the literal secrets only.
    """

    def __init__(self, secrets: Iterable[str] = (), patterns: Iterable[str] = (), *,
                 builtin: bool = True) -> None:
        literals = sorted({utf8_safe(s) for s in secrets
                           if isinstance(s, str) and len(s) >= MIN_SECRET_CHARS},
                          key=len, reverse=True)
        patterns = [p for p in patterns if p]
        # Literal secrets with whitespace span words: streams must hold that much back.
        self.max_spaced_literal = max((len(s) for s in literals if _has_space(s)), default=0)
        self.has_patterns = bool(patterns)
        self._literals = literals
        self._builtin = builtin
        # The patterns without the literals are compiled once per process (they are the
        # same for every run); an invalid one raises PatternError here, so a run never
        # starts half-protected.
        self._shared, self._any = _compiled(tuple(patterns), builtin)
        # With the literals (the run's own credential): compiled only for a text that
        # holds one of them, which most texts do not (found by exact match).
        self._with_literals: list[Any] | None = None

    def _patterns_for(self, text: str) -> list[Any]:
        if not any(literal in text for literal in self._literals):
            return self._shared
        if self._with_literals is None:
            # One alternation for the fixed shapes; longest literal first so a secret
            # that contains another one is hidden whole (as without literals, the
            # configured patterns stay separate: merging could renumber their groups).
            fixed = [re2.escape(s) for s in self._literals]
            fixed += BUILTIN_PATTERNS if self._builtin else ()
            self._with_literals = [compile_re2(_alternation(fixed)),
                                   *self._shared[1 if self._builtin else 0:]]
        return self._with_literals

    def _scanned(self, text: str) -> list[Any]:
        """The patterns that may match `text`: none when one search for all of them
        finds nothing, as for most texts (each RE2 call costs ~10 µs whatever the text)."""
        patterns = self._patterns_for(text)
        if patterns is self._shared and self._any is not None and self._any.search(text) is None:
            return []
        return patterns

    def redact(self, text: str) -> str:
        text = utf8_safe(text)  # RE2 reads UTF-8, which has no lone surrogates
        for pattern in self._scanned(text):
            if pattern.search(text) is not None:  # most texts hold no secret: half the cost
                text = pattern.sub(REDACTED, text)
        return text

    def spans(self, text: str) -> list[tuple[int, int]]:
        text = utf8_safe(text)  # same length: one U+FFFD per lone surrogate
        return [m.span() for p in self._scanned(text) for m in p.finditer(text)
                if m.end() > m.start()]

    def preview(self, text: str) -> str:
        """Redacted and cut to 2,000 characters."""
        if len(text) > _SCAN_CHARS:
            text = text[:_SCAN_CHARS]
        return self.redact(text)[:PREVIEW_CHARS]

    def output(self, text: str) -> str:
        """Redacted and cut to 64 KiB of UTF-8 (never in the middle of a character)."""
        return truncate_bytes(self.redact(text), OUTPUT_BYTES)

    def text(self, text: str) -> str:
        """A model's text for node.completed: redacted, cut to 64 KiB with a marker."""
        return truncate_marked(self.redact(text), TEXT_BYTES)


_COMPILED: dict[tuple[tuple[str, ...], bool], tuple[list[Any], Any | None]] = {}


def _compiled(patterns: tuple[str, ...], builtin: bool) -> tuple[list[Any], Any | None]:
    """The built-in shapes (one alternation) and the configured patterns, compiled once
    per process for each set of patterns; and, when there are several, one alternation
    of them all, whose single search tells a text that holds no secret (None when RE2
    refuses the union, e.g. past its memory budget: each is searched then)."""
    key = (patterns, builtin)
    if key not in _COMPILED:
        shapes = BUILTIN_PATTERNS if builtin else ()
        compiled = [compile_re2(_alternation(shapes))] if builtin else []
        compiled.extend(compile_re2(p) for p in patterns)
        union = None
        if len(compiled) > 1:
            with contextlib.suppress(PatternError):
                union = compile_re2(_alternation((*shapes, *patterns)))
        if len(_COMPILED) >= 64:  # bounded: patterns come from configuration, not runs
            _COMPILED.clear()
        _COMPILED[key] = (compiled, union)
    return _COMPILED[key]


def _alternation(patterns: Iterable[str]) -> str:
    """One pattern matching wherever any of `patterns` does (each kept in its group)."""
    return "|".join(f"(?:{p})" for p in patterns)


def truncate_bytes(text: str, limit: int) -> str:
    # Fast path: a str of n code points needs at most 4n bytes.
    if len(text) * 4 <= limit:
        return text
    raw = text.encode("utf-8")
    if len(raw) <= limit:
        return text
    return raw[:limit].decode("utf-8", errors="ignore")


def truncate_marked(text: str, limit: int) -> str:
    """`text` if it fits in `limit` bytes, else its head and TRUNCATED within them."""
    cut = truncate_bytes(text, limit)
    if cut is text:
        return text
    return truncate_bytes(text, limit - len(TRUNCATED.encode("utf-8"))) + TRUNCATED


class StreamRedactor:
    """Redacts a text that arrives in chunks, for node.delta events.

    A secret may be split across chunks ("sk-ab" + "cdef..."). Redacting each chunk
    alone would leak both halves, so the last word (which may still grow into a
    secret) is held back until the next word starts, and the cut never falls inside a
    match. Deltas therefore run one word behind. Secrets that span words (literals
    with spaces, configured patterns) hold back more characters. node.completed
    always carries the full redacted text; deltas are a best-effort live view,
    bounded like it: past TEXT_BYTES of deltas (or a held-back word that long) the
    stream ends with TRUNCATED. Only the unreleased tail is kept, and the last word
    is tracked per chunk, so the work is linear in the streamed text.
    """

    def __init__(self, redactor: Redactor, limit: int = TEXT_BYTES) -> None:
        self._redactor = redactor
        self._hold = max(redactor.max_spaced_literal,
                         STREAM_HOLD_CHARS if redactor.has_patterns else 0)
        self._pending = ""  # received, not released yet
        self._word: int | None = None  # where the last word starts in _pending
        self._left = limit - len(TRUNCATED.encode("utf-8"))  # bytes deltas may still use
        self._ended = False

    def feed(self, chunk: str) -> str:
        if self._ended or not chunk:
            return ""
        self._track_word(chunk)
        cut = len(self._pending) if self._word is None else self._word
        if self._hold:
            cut = min(cut, len(self._pending) - self._hold)
        piece = self._release(cut)
        if len(self._pending) > self._left:  # what is held back can no longer fit
            return self._end(piece)
        return piece

    def flush(self) -> str:
        return "" if self._ended else self._release(len(self._pending))

    def _track_word(self, chunk: str) -> None:
        """Append chunk, keeping `_word` (the start of the `\\S+\\s*$` match) current."""
        offset = len(self._pending)
        continues = offset > 0 and not self._pending[-1].isspace()
        self._pending += chunk
        body = chunk.rstrip()
        if not body:
            return  # whitespace only: the last word (if any) just grew its tail
        start = len(body) - len(body.split()[-1])
        if start > 0 or not continues:
            self._word = offset + start
        # else: the chunk's first word continues the held-back one

    def _release(self, cut: int) -> str:
        if cut <= 0:
            return ""
        moved = True
        spans = self._redactor.spans(self._pending)
        while moved:  # moving the cut can split another (overlapping) match
            moved = False
            for start, end in spans:
                if start < cut < end:
                    cut, moved = start, True
        if cut <= 0:
            return ""
        piece = self._redactor.redact(self._pending[:cut])
        self._pending = self._pending[cut:]
        if self._word is not None:
            self._word = self._word - cut if self._word >= cut else None
        size = len(piece.encode("utf-8"))
        if size > self._left:
            return self._end(truncate_bytes(piece, self._left))
        self._left -= size
        return piece

    def _end(self, piece: str) -> str:
        self._ended = True
        self._pending = ""
        return piece + TRUNCATED


def _has_space(text: str) -> bool:
    return any(c.isspace() for c in text)
