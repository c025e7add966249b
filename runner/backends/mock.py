"""The deterministic mock backend (architecture.md, Model backends).

Replies `mock: ` followed by the last user text, streamed word by word; tokens are
the words of the prompt plus the words of the reply. It cannot judge.
"""

from __future__ import annotations

import asyncio
import re

from runner.backends import Completion, Messages, OnDelta, count_words, last_user_text

_WORD = re.compile(r"\S+\s*|\s+")


class MockBackend:
    name = "mock"
    can_judge = False

    def __init__(self, delay: float = 0.0) -> None:
        # A per-word delay lets tests hold a stream open (cancellation, concurrency).
        self.delay = delay

    async def complete(self, messages: Messages, on_delta: OnDelta) -> Completion:
        reply = "mock: " + last_user_text(messages)
        for word in _WORD.findall(reply):
            if self.delay:
                await asyncio.sleep(self.delay)
            await on_delta(word)
        return Completion(reply, count_words(messages) + len(reply.split()))
