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
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import pairwise

from ledger.mirror.pieces import Cache, line
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
    return (
        old.gaps[0] == len(lead)
        and old.ends[-1] == len(text)
        and all(between == gap for between in old.gaps[1:])
    )


def resplice(cache: Cache, head: str, moved: Mapping[str, Moved], *, log: bool = False) -> Spliced | None:
    """The file `cache` holds with the `moved` rows taken out and put back where they go; None when the
    file is not exactly the shape this reads, or too much changed.

    The rows that did not move keep their text, and their line of the pieces too (which says where
    the text stands from the end of the row before: the same wherever the row now is, but first); the
    runs of them between two moved rows are copied whole."""
    old = cache.entries
    try:
        levels = [int(n) for n in old.levels] if log else []
    except ValueError:
        return None
    if len(moved) > MOST or not _shaped(cache, head, levels, log):
        return None
    kept = [n for n, key in enumerate(old.keys) if key not in moved]
    places = [(old.orders[n], int(old.keys[n].rpartition(":")[2])) for n in kept]
    if any(after <= before for before, after in pairwise(places)):
        return None
    # The new order: the index of each row kept, and each moved row shown, by their places.
    order: list[int | Moved] = list(kept)
    for shown in sorted((m for m in moved.values() if m.order is not None), key=lambda m: m.order or ("", 0)):
        assert shown.order is not None
        at = bisect.bisect_left(places, shown.order)
        places.insert(at, shown.order)
        order.insert(at, shown)
    new_levels = [(levels[i] if isinstance(i, int) else i.level) for i in order] if log else []
    separator = _separator(new_levels, log)
    # When the separator stays the same, a run of rows kept one after the other is copied whole.
    same = separator == _separator(levels, log)
    lead = _lead(head, len(order))
    text, gap = cache.text, len(separator)
    out = Spliced()
    segments: list[str] = []
    lines: list[str] = []
    n = 0
    while n < len(order):
        item = order[n]
        # How far this row's text starts after the previous one's ends.
        before = gap if n else len(lead)
        if isinstance(item, Moved):
            place, level = (item.order or ("", 0))[0], str(item.level) if log else ""
            segments.append(item.text)
            lines.append(line(item.key, item.stamp, before, len(item.text), place, level))
            out.keys.append(item.key)
            n += 1
            continue
        run = 1
        while same and n + run < len(order) and order[n + run] == item + run:
            run += 1
        end = item + run
        segments.append(text[old.starts[item] : old.ends[end - 1]])
        if old.gaps[item] == before:
            lines += old.lines[item:end]
        else:
            length = old.ends[item] - old.starts[item]
            lines.append(
                line(old.keys[item], old.stamps[item], before, length, old.orders[item], old.levels[item])
            )
            lines += old.lines[item + 1 : end]
        out.keys += old.keys[item:end]
        n += run
    out.text = lead + separator.join(segments)
    out.lines = "".join(lines)
    if log:
        out.levels = dict(zip(out.keys, new_levels, strict=True))
    return out
