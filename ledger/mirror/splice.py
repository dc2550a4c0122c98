"""A file that lists rows oldest first, rendered again from the one Canon wrote at the cost of what
changed: the log Canon alone writes, `boundaries.md` and `patterns.md`.

Such a file is a head, then the text of each row it shows, oldest first (`created_at`, then the id),
with one separator between two; nothing else. Its pieces (`ledger.mirror.pieces`) say where each row's
text stands and where the row goes in that order. Given the rows that changed since the file was
written (the change rows of their kind: `ledger.mirror.changes`), the new file is the old one with
those rows taken out and put back, rendered, where they now go when the file still shows them: the same
bytes as rendering every row. The old file is first checked to be exactly that shape; when it is not,
it is rendered as any other file.
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import compress, pairwise

from ledger.mirror.pieces import Cache, Lines, remember
from ledger.mirror.render import needs_rule

# More changed rows than this: the file is rendered as any other.
MOST = 500


@dataclass(slots=True)
class Moved:
    """A row that changed: its key, where it goes (None: the file no longer shows it), and when it is
    shown its stamp, its text and (in the log) its block's heading level."""

    key: str
    order: tuple[str, int] | None
    stamp: str = ""
    text: str = ""
    level: int = 0


@dataclass
class Spliced:
    """The new file: its text, its pieces' lines, the keys of its rows in order, and the heading level
    of each block (in the log)."""

    text: str = ""
    lines: str = ""
    keys: list[str] = field(default_factory=list)
    levels: dict[str, int] = field(default_factory=dict)


def _separator(levels: list[int], log: bool) -> str:
    """Between two rows: a blank line; in the log, a `---` line too when a block would otherwise read
    as part of the one before it (`render.render_decisions`)."""
    return "\n---\n\n" if log and needs_rule(levels) else "\n"


def _lead(head: str, count: int) -> str:
    """What stands before the first row: the head and a blank line; the head alone when no row is."""
    return head + "\n" if count else head


def _shaped(cache: Cache, head: str, levels: list[int], log: bool) -> bool:
    """Whether the file is the head, then each row's text, one separator between two, nothing else (as
    far as where its rows' texts stand tells), each row with its place in the order."""
    old, text = cache.entries, cache.text
    gap = len(_separator(levels, log))
    lead = _lead(head, len(old))
    if not text.startswith(lead) or not all(old.orders):
        return False
    if not old:
        return len(text) == len(lead)
    return old.gaps[0] == len(lead) and old.ends[-1] == len(text) and old.gaps[1:].count(gap) == len(old) - 1


def _each(step: Moved | tuple[int, int]) -> range:
    """The indexes of a run's rows (one for a moved row, which is not a run)."""
    return range(1) if isinstance(step, Moved) else range(*step)


def resplice(cache: Cache, head: str, moved: Mapping[str, Moved], *, log: bool = False) -> Spliced | None:
    """The file `cache` holds with the `moved` rows taken out and put back where they go; None when the
    file is not exactly the shape this reads, or too much changed.

    The rows that did not move keep their text, and their line of the pieces too (which says where
    the text stands from the end of the row before: the same wherever the row now is, but first); the
    runs of them between two moved rows are copied whole."""
    old = cache.entries
    try:
        levels = list(map(int, old.levels)) if log else []
    except ValueError:
        return None
    if len(moved) > MOST or not _shaped(cache, head, levels, log):
        return None
    kept = [n for n, key in enumerate(old.keys) if key not in moved]

    def where(n: int) -> tuple[str, int]:
        return old.orders[n], int(old.keys[n].rpartition(":")[2])

    # The rows kept must stand in their order: by `created_at` as stored, then (for two alike) the id.
    orders = [old.orders[n] for n in kept]
    if not all(map(operator.le, orders, orders[1:])):
        return None
    alike = compress(range(len(kept) - 1), map(operator.eq, orders, orders[1:]))
    if any(where(kept[i]) >= where(kept[i + 1]) for i in alike):
        return None
    # The new order: runs of rows kept one after the other (their indexes in the old file, from and to),
    # and each moved row shown, where its place puts it among the rows kept.
    shown = sorted((m for m in moved.values() if m.order is not None), key=lambda m: m.order or ("", 0))
    ats = [bisect.bisect_left(kept, m.order, key=where) for m in shown if m.order is not None]
    removed = [n for n, key in enumerate(old.keys) if key in moved]
    cuts = sorted({0, len(kept), *ats, *(n - k for k, n in enumerate(removed))})
    plan: list[Moved | tuple[int, int]] = []
    j = 0
    for start, end in pairwise(cuts):
        while j < len(shown) and ats[j] == start:
            plan.append(shown[j])
            j += 1
        plan.append((kept[start], kept[end - 1] + 1))
    plan += shown[j:]
    new_levels: list[int] = []
    if log:
        for step in plan:
            new_levels += [step.level] if isinstance(step, Moved) else levels[step[0] : step[1]]
    separator = _separator(new_levels, log)
    if separator != _separator(levels, log):
        # Every row kept stands after another separator: each is a run of its own.
        plan = [s if isinstance(s, Moved) else (n, n + 1) for s in plan for n in _each(s)]
    lead = _lead(head, len(kept) + len(shown))
    text, gap = cache.text, len(separator)
    out = Spliced()
    segments: list[str] = []
    # The new pieces, and the rows they say, so that the next export need not read them.
    written = Lines()
    for step in plan:
        # How far this row's text starts after the previous one's ends.
        before = gap if segments else len(lead)
        if isinstance(step, Moved):
            place, level = (step.order or ("", 0))[0], str(step.level) if log else ""
            segments.append(step.text)
            written.add(step.key, step.stamp, before, len(step.text), place, level)
            continue
        first, end = step
        segments.append(text[old.starts[first] : old.ends[end - 1]])
        written.copy(old, first, end, before)
    out.text = lead + separator.join(segments)
    out.lines = "".join(written.lines)
    out.keys = written.keys
    remember(out.lines, written.entries())
    if log:
        out.levels = dict(zip(out.keys, new_levels, strict=True))
    return out
