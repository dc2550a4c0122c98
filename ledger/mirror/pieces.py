"""Where each row's text stands in a file Canon wrote, so that rendering it again costs what changed.

When Canon writes a file it records, per row the file holds, the row's stamp (what its text was drawn
from: the row's `updated_at`, and a replacement's for a superseded decision) and where its text stands
in the file: how far after the previous row's text it starts, and its length (`MirrorFile.pieces`). A
row's record changes only when its own text or what stands just before it does, whatever moved
further up the file. The next export of that file takes the text of every row
whose stamp is unchanged from the file itself, when the file is still exactly what Canon wrote (its
sha256) and the rendering code is the same (`RENDERING`); only the other rows are rendered again. The
layout of the file (which rows, where, with what between them) is decided afresh every time, so the
result is byte for byte what rendering every row would give.
"""

from __future__ import annotations

import hashlib
import operator
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any

from ledger import untrusted
from ledger.mirror import render, squad


def _rendering() -> str:
    """The version of the code that shapes the files' text: a release that changes it renders every
    file again once, whatever the fingerprints say."""
    digest = hashlib.sha256()
    here = Path(__file__)
    files = [
        here,
        here.with_name("splice.py"),
        Path(render.__file__),
        Path(untrusted.__file__),
        *sorted(Path(squad.__file__).parent.glob("*.py")),
    ]
    for path in files:
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(path.name.encode("utf-8"))
    return digest.hexdigest()[:16]


class Cache:
    """The texts of the rows a file held when Canon wrote it, taken from the file as it stands; its
    entries, by key and in order, read from the pieces only when asked for."""

    RENDERING = _rendering()

    def __init__(self, text: str = "", lines: str = "", parts: Mapping[str, str] | None = None) -> None:
        self.text = text
        self._lines = lines
        self._parts = parts or {}
        self._entries: Entries | None = None
        self._rows: dict[str, int] | None = None

    @property
    def entries(self) -> Entries:
        """The rows in the order the file holds them (none when the pieces cannot be read)."""
        if self._entries is None:
            self._entries = Entries.read(self._lines) or Entries()
        return self._entries

    @property
    def digests(self) -> dict[str, str]:
        """The sha256 of each row's text, as the manifest's parts say it (the text is the one they were
        recorded for)."""
        return {key: part for part, key in self._parts.items()}

    def text_of(self, key: str, stamp: str) -> str | None:
        """The row's text in the file, when it was written from this stamp; else None."""
        found = self.entries
        if self._rows is None:
            self._rows = {k: n for n, k in enumerate(found.keys)}
        n = self._rows.get(key)
        if n is None or found.stamps[n] != stamp:
            return None
        return self.text[found.starts[n] : found.ends[n]]


def cache(current: bytes | None, pieces: Mapping[str, Any], digest: str, parts: Mapping[str, str]) -> Cache:
    """What the file holds of each row, when `current` (its bytes now, whose sha256 is `digest`) is the
    file these pieces were recorded for (with these `parts`); an empty cache otherwise."""
    if current is None or not pieces or pieces.get("sha256") != digest:
        return Cache()
    if pieces.get("rendering") != Cache.RENDERING:
        return Cache()
    try:
        text = current.decode("utf-8")
    except UnicodeDecodeError:
        return Cache()
    return Cache(text, str(pieces.get("rows") or ""), parts)


@dataclass
class Entries:
    """The rows of a file, in the order it holds them, a list per column: each one's key, stamp, how far
    after the previous row's text (or the file's start) its text starts, where it starts and ends, and
    (for a file listing rows oldest first) its place in that order (`created_at` as stored, then the
    id) and, in the log, the heading level of its block; and the line of the pieces that says so."""

    keys: list[str] = field(default_factory=list)
    stamps: list[str] = field(default_factory=list)
    gaps: list[int] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    orders: list[str] = field(default_factory=list)
    levels: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.keys)

    @classmethod
    def read(cls, lines: str) -> Entries | None:
        """The rows of the pieces' lines; None if they cannot be read. Lines this process wrote itself
        (`remember`) are not read again."""
        if not lines:
            return cls()
        with _written_lock:
            known = _written.get(lines)
        if known is not None:
            return known
        fields = lines.replace("\n", "\t").split("\t")[:-1]
        if len(fields) % 6:
            return None
        try:
            gaps = list(map(int, fields[2::6]))
            lengths = list(map(int, fields[3::6]))
        except ValueError:
            return None
        if min(gaps, default=0) < 0 or min(lengths, default=0) < 0:
            return None
        ends = list(accumulate(map(operator.add, gaps, lengths)))
        starts = list(map(operator.sub, ends, lengths))
        found = cls(
            fields[0::6],
            fields[1::6],
            gaps,
            starts,
            ends,
            fields[4::6],
            fields[5::6],
            lines.splitlines(keepends=True),
        )
        return found if len(found.lines) == len(found.keys) else None


# The rows of the pieces this process last wrote, by their lines (a string compared by identity first):
# the export after the next write does not read them again.
_written: OrderedDict[str, Entries] = OrderedDict()
_written_lock = threading.Lock()
WRITTEN = 64
# A file of more rows than this is remembered when written whole (a splice's always is).
REMEMBERED = 200


def remember(lines: str, entries: Entries) -> None:
    """Keep the rows these lines say (`Entries.read` gives them back)."""
    with _written_lock:
        _written[lines] = entries
        _written.move_to_end(lines)
        while len(_written) > WRITTEN:
            _written.popitem(last=False)


def line(key: str, stamp: str, gap: int, length: int, order: str = "", level: str = "") -> str:
    """A row's line of the pieces: its text starts `gap` characters after the previous row's ends."""
    return f"{key}\t{stamp}\t{gap}\t{length}\t{order}\t{level}\n"


class Lines:
    """The lines of the pieces of a file being written, and the rows they say, column by column: what
    `Entries.read` would give of them, without reading them (`remember`)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.keys: list[str] = []
        self.stamps: list[str] = []
        self.gaps: list[int] = []
        self.lengths: list[int] = []
        self.orders: list[str] = []
        self.levels: list[str] = []

    def __len__(self) -> int:
        return len(self.keys)

    def add(self, key: str, stamp: str, gap: int, length: int, order: str = "", level: str = "") -> None:
        """A row whose text starts `gap` characters after the previous row's ends."""
        self.lines.append(line(key, stamp, gap, length, order, level))
        self.keys.append(key)
        self.stamps.append(stamp)
        self.gaps.append(gap)
        self.lengths.append(length)
        self.orders.append(order)
        self.levels.append(level)

    def copy(self, old: Entries, first: int, end: int, gap: int) -> None:
        """The rows `first` to `end` of `old`, the first now `gap` after the row before: their lines as
        they are, but the first's when its gap changed."""
        if first < end and old.gaps[first] != gap:
            length = old.ends[first] - old.starts[first]
            self.add(old.keys[first], old.stamps[first], gap, length, old.orders[first], old.levels[first])
            first += 1
        self.lines += old.lines[first:end]
        self.keys += old.keys[first:end]
        self.stamps += old.stamps[first:end]
        self.gaps += old.gaps[first:end]
        self.lengths += map(operator.sub, old.ends[first:end], old.starts[first:end])
        self.orders += old.orders[first:end]
        self.levels += old.levels[first:end]

    def entries(self) -> Entries:
        ends = list(accumulate(map(operator.add, self.gaps, self.lengths)))
        starts = list(map(operator.sub, ends, self.lengths))
        return Entries(
            list(self.keys), self.stamps, self.gaps, starts, ends, self.orders, self.levels, self.lines
        )


def record(
    text: str,
    order: Iterable[tuple[str, str]],
    stamps: Mapping[str, str],
    digest: str,
    marks: Mapping[str, tuple[str, str]] | None = None,
    lines: str | None = None,
) -> dict[str, Any]:
    """The pieces of a file about to be written: for each row in `order` (its key and its text, in the
    order the file holds them) that has a stamp, the stamp, where the text stands in `text`, and its
    `marks` (its place in the file's order, its heading level); a line per row,
    `{key}\t{stamp}\t{gap}\t{length}\t{order}\t{level}` (one string is read and written much faster
    than as many JSON values). `lines`: those lines, when known already."""
    if lines is not None:
        return {"rendering": Cache.RENDERING, "sha256": digest, "rows": lines} if lines else {}
    written = Lines()
    cursor = 0
    marks = marks or {}
    for key, piece in order:
        stamp = stamps.get(key)
        if stamp is None:
            continue
        # The first place at or after the previous row where this text stands: the row's own place, or
        # an earlier one holding the same text, which serves as well.
        at = text.find(piece, cursor)
        if at < 0:
            continue
        place, level = marks.get(key, ("", ""))
        written.add(key, stamp, at - cursor, len(piece), place, level)
        cursor = at + len(piece)
    if not written:
        return {}
    joined = "".join(written.lines)
    if len(written) > REMEMBERED:
        remember(joined, written.entries())
    return {"rendering": Cache.RENDERING, "sha256": digest, "rows": joined}
