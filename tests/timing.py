"""Timing checks that a busy machine does not turn into failures."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def fastest(work: Callable[[], T], runs: int = 5) -> tuple[float, T]:
    """The shortest of `runs` timings of `work` (another process can only make a run slower), and its
    last result."""
    best = float("inf")
    result: T
    for _ in range(runs):
        started = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - started)
    return best, result
