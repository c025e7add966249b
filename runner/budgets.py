"""A run's budgets from its settings: max_steps, max_tokens and timeout_seconds.

timeout_seconds is enforced twice: the engine waits for the run at most that long
(which needs the event loop to get control back), and the scheduler checks the
deadline between synchronous steps (pure nodes run inline, without yielding), so a
CPU-bound run stops on time too.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import monotonic

from contracts.registry import SETTINGS_RANGES


@dataclass(frozen=True, slots=True)
class BudgetExceeded:
    budget: str  # max_steps or max_tokens
    message: str


def setting(settings: dict[str, int], name: str) -> int:
    low, high, default = SETTINGS_RANGES[name]
    value = settings.get(name, default)
    # Out-of-range values never pass validation; clamp rather than trust them here.
    return min(max(value, low), high)


class Budgets:
    def __init__(self, settings: dict[str, int]) -> None:
        self.max_steps = setting(settings, "max_steps")
        self.max_tokens = setting(settings, "max_tokens")
        self.timeout_seconds = setting(settings, "timeout_seconds")
        self.deadline = monotonic() + self.timeout_seconds
        self.steps = 0
        self.tokens = 0

    def take_step(self) -> BudgetExceeded | None:
        """A step is a node that runs; skipped nodes are not steps."""
        if self.steps >= self.max_steps:
            return BudgetExceeded(
                "max_steps", f"the run needs more than max_steps ({self.max_steps}) steps"
            )
        self.steps += 1
        return None

    def add_tokens(self, tokens: int) -> BudgetExceeded | None:
        self.tokens += max(tokens, 0)
        if self.tokens > self.max_tokens:
            return BudgetExceeded(
                "max_tokens",
                f"the run used {self.tokens} tokens, over max_tokens ({self.max_tokens})",
            )
        return None

    def expired(self) -> bool:
        return monotonic() >= self.deadline
