"""A clock the test moves by hand (`clock.now += 5`): idle timers judged without waiting."""

from __future__ import annotations


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now
