"""The time a target's forwards may still take, inside the parent's --graph-timeout: each
phase runs only when its forwards, at the cost of the first accepted forward, still fit;
one that does not is skipped with a note, and the class stays built."""

from __future__ import annotations

import time

# The share of --graph-timeout a target's work may plan to use: the rest is the margin for
# a forward slower than the first and for the reply.
SHARE = 0.9


class Budget:
    def __init__(self, deadline: float | None = None) -> None:
        self.deadline = deadline  # time.monotonic() value; None: no limit (snlint.audit)
        self.forward_seconds = 0.0  # what the first accepted forward took

    @classmethod
    def for_timeout(cls, timeout: float | None) -> "Budget":
        return cls(None if not timeout else time.monotonic() + SHARE * timeout)

    def allows(self, forwards: int) -> bool:
        return self.deadline is None or time.monotonic() + forwards * self.forward_seconds <= self.deadline

    def refusal(self, shape: list[int]) -> str:
        shown = "x".join(str(d) for d in shape[1:]) or "its input"
        left = max(0.0, (self.deadline or 0.0) - time.monotonic())
        return (f"a forward at {shown} takes {self.forward_seconds:.1f} s and {left:.1f} s of "
                "the time limit were left (raise --graph-timeout)")
