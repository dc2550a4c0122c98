"""How much of a team file the parsers read into rows: the measure of adopting a file faithfully.

Counts lines, not parts, so that a parser that reads a file into a few large rows and one that reads it
into many small ones are judged by the same thing: how many of the lines people wrote end up in a row.
Only what any parser returns is used: each part's text, whether it is `Text`, and `Text.reason`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from ledger.mirror.squad.decisions import Block
from ledger.mirror.squad.history import Entry
from ledger.mirror.squad.lines import HEADING_OF_ROWS, Text

# What a report says of lines kept as Text whose parser gave no reason.
NOT_READ = "not read"
# Lines that frame a file rather than say anything a row could hold: the file's own title
# (`# Rai — History`), a template's comment (`<!-- Append learnings below -->`). Counted in neither share,
# and reported as such.
FRAME = frozenset({"title", "comment"})
# A day heading (`## 2026-06-08`) dates the decisions under it, as a typed heading types its rows.
READ_REASONS = frozenset({HEADING_OF_ROWS, "day heading"})

_RULE = re.compile(r"[ \t]{0,3}([-*_])[ \t]*(?:\1[ \t]*){2,}\Z")


@dataclass(frozen=True)
class LineReport:
    """The non-blank lines of one file, read into rows or kept as text.

    - `rows`: lines inside a Block or Entry, and lines of a heading whose rows follow it
      (`HEADING_OF_ROWS`);
    - `kept`: lines kept only as Text, counted per reason (`NOT_READ` when the parser gave none), the
      most lines first;
    - `frame`: lines of the file's title and of comments (`FRAME`), counted in neither.

    Blank lines and lines that are only a rule (`---`, `***`, `___`) are counted in neither.
    """

    rows: int = 0
    kept: dict[str, int] = field(default_factory=dict)
    frame: int = 0

    @property
    def counted(self) -> int:
        """Every line the report counts: rows plus kept."""
        return self.rows + sum(self.kept.values())

    @property
    def share(self) -> float:
        """rows / counted, between 0 and 1; 1.0 for a file with nothing to count (nothing was missed)."""
        return self.rows / self.counted if self.counted else 1.0

    def describe(self) -> str:
        """One line a person can read, e.g. "240 of 246 lines read into rows; kept as text: 4 preamble,
        2 untyped section 'Team'"."""
        if not self.counted:
            return "no lines to read"
        said = f"{self.rows} of {self.counted} {'line' if self.counted == 1 else 'lines'} read into rows"
        if self.kept:
            said += "; kept as text: " + ", ".join(f"{n} {reason}" for reason, n in self.kept.items())
        if self.frame:
            said += (
                f" (not counted: {self.frame} {'line' if self.frame == 1 else 'lines'} of title or comment)"
            )
        return said


def line_report(parts: Iterable[Text | Block | Entry]) -> LineReport:
    """The LineReport of the parts `parse_decisions` or `parse_history` returned for one file.

    The parts' texts are joined back into the file and its lines found there (only "\\n" ends a line, a
    "\\r" before it and a byte-order mark on the first line are not content), so a part that ends inside
    a line cannot count that line twice: a line belongs to the part holding its first non-blank
    character.
    """
    parts = list(parts)
    starts: list[int] = []
    offset = 0
    for part in parts:
        starts.append(offset)
        offset += len(part.text)
    text = "".join(part.text for part in parts)

    rows = frame = 0
    kept: Counter[str] = Counter()
    line_start = 0
    for line in text.split("\n"):
        content = line.removesuffix("\r")
        skipped = 0
        if line_start == 0 and content.startswith("\ufeff"):
            content = content[1:]
            skipped = 1
        bare = content.lstrip()
        if bare.strip() and not _RULE.match(content):
            part = parts[bisect_right(starts, line_start + skipped + len(content) - len(bare)) - 1]
            if not isinstance(part, Text) or part.reason in READ_REASONS:
                rows += 1
            elif part.reason in FRAME:
                frame += 1
            else:
                kept[part.reason or NOT_READ] += 1
        line_start += len(line) + 1
    ordered = dict(sorted(kept.items(), key=lambda item: (-item[1], item[0])))
    return LineReport(rows=rows, kept=ordered, frame=frame)
