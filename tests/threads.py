"""Real threads racing on the database, for the concurrency tests."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import anyio
from django.db import connection


def race(workers: list[Callable[[], Any]]) -> list[Any]:
    """Start every worker at the same instant; each uses (and closes) its own DB connection."""
    barrier = threading.Barrier(len(workers))
    results: list[Any] = [None] * len(workers)

    def run(i: int, work: Callable[[], Any]) -> None:
        try:
            barrier.wait()
            results[i] = work()
        except Exception as exc:  # a crash is a result the test asserts on
            results[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, w)) for i, w in enumerate(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return results


T = TypeVar("T")


def run_async(fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    """`anyio.run(fn, *args)` in a thread of its own, whatever loop runs in this one (Playwright's sync
    API leaves one running in the thread of every test after a browser test in the same process)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, fn, *args).result()
