"""A run's budgets from its settings: max_steps, max_tokens and timeout_seconds.

timeout_seconds is the run's clock (runner.clock), which stands still while the run
waits for a person's decision. It is enforced twice: the engine runs the scheduler
under the clock's limit (which needs the event loop to get control back), and the
scheduler checks it between synchronous steps (pure nodes run inline, without
yielding), so a CPU-bound run stops on time too.
"""

from __future__ import annotations

from dataclasses import dataclass

from contracts.registry import SETTINGS_RANGES
from runner.clock import Clock


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
    def __init__(self, settings: dict[str, int], parent: Clock | None = None) -> None:
        """`parent`: the clock of the node running this (nested) run, if any."""
        self.max_steps = setting(settings, "max_steps")
        self.max_tokens = setting(settings, "max_tokens")
        self.timeout_seconds = setting(settings, "timeout_seconds")
        self.clock = Clock(self.timeout_seconds, parent)
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
        return self.clock.expired()
