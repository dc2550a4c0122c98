"""An emulation of Squad's Scribe, for the interop tests.

Squad's Scribe is an LLM agent, not code: it does what its charter (`.squad/templates/scribe-charter.md`,
"How I Work", steps 2 to 4) tells it. This module does those steps, in the charter's order, so the tests can
put the Scribe's writes between Canon's:

2. merge the decision inbox: each inbox file's contents are appended to `decisions.md`, then the file is
   deleted;
3. deduplicate `decisions.md`: the file is split into blocks at `### ` headings (with Squad's own
   `splitEntries`), and of blocks that share the same heading the first is kept and the rest removed;
4. propagate cross-agent updates: `📌 Team update ({time}): {summary} — decided by {Name}` is appended at
   the end of the history of each agent the decision affects.

The charter's consolidation of overlapping decisions (judged by reading them) is not emulated.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.interop import squad

_DATED = re.compile(r"^\d{4}-\d{2}-\d{2}(?:T[\d:.\-]+Z?)?\s*:\s*")
_BY = re.compile(r"^\*\*(?:By|Author):\*\*\s*(.+?)\s*$", re.MULTILINE)
_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.DOTALL)
_FRONT_FIELD = re.compile(r'^(title|author):\s*"?(.*?)"?\s*$', re.MULTILINE)


@dataclass
class Merged:
    """One inbox file the Scribe merged: its name, the decision's summary and who decided it."""

    name: str
    summary: str
    author: str


@dataclass
class ScribePass:
    """What one pass of the emulated Scribe did."""

    merged: list[Merged] = field(default_factory=list)
    # The text of each block removed because an earlier block has the same heading.
    removed: list[str] = field(default_factory=list)
    # Each history file written, with the lines appended to it.
    updates: dict[Path, list[str]] = field(default_factory=dict)


def _summary_and_author(name: str, text: str) -> tuple[str, str]:
    """The decision's summary and author as the Scribe reads them from an inbox file."""
    summary = author = ""
    front = _FRONT.match(text)
    if front:
        fields = dict(_FRONT_FIELD.findall(front.group(1)))
        summary, author = fields.get("title", ""), fields.get("author", "")
    heading = next((line for line in text.splitlines() if line.startswith("#")), "")
    if not summary and heading:
        summary = _DATED.sub("", heading.lstrip("#").strip()).removeprefix("Decision:").strip()
    by = _BY.search(text)
    if by:
        author = by.group(1)
    if not author:
        author = name.split("-")[0]
    author = author.strip()
    return summary or name.removesuffix(".md"), author[:1].upper() + author[1:]


def _deduplicate(text: str) -> tuple[str, list[str]]:
    """`text` with every `### ` block whose heading an earlier block has removed; the removed blocks."""
    split = squad.split_entries(text, 3)
    seen: set[str] = set()
    kept: list[str] = []
    removed: list[str] = []
    for entry in split["entries"]:
        if entry["heading"] in seen:
            removed.append(entry["text"])
            continue
        seen.add(entry["heading"])
        kept.append(entry["text"])
    if not removed:
        return text, []
    return "\n".join([split["preamble"], *kept]), removed


def scribe_pass(root: Path, *, now: str, affects: Sequence[str] = ()) -> ScribePass:
    """Run the emulated Scribe on the team at `root` (`.squad/`). `now` is the CURRENT_DATETIME its spawn
    prompt gives it (an ISO time); `affects` names the agent folders (under `agents/`) each newly merged
    decision affects. Returns what it did."""
    folder = root / ".squad"
    log = folder / "decisions.md"
    inbox = folder / "decisions" / "inbox"
    done = ScribePass()
    text = log.read_text(encoding="utf-8")
    for path in sorted(inbox.glob("*.md")) if inbox.is_dir() else []:
        contents = path.read_text(encoding="utf-8")
        if not text.endswith("\n"):
            text += "\n"
        text += "\n" + contents.strip("\n") + "\n"
        summary, author = _summary_and_author(path.name, contents)
        done.merged.append(Merged(name=path.name, summary=summary, author=author))
    text, done.removed = _deduplicate(text)
    log.write_text(text, encoding="utf-8")
    for merged in done.merged:
        (inbox / merged.name).unlink()
    for merged in done.merged:
        line = f"📌 Team update ({now}): {merged.summary} — decided by {merged.author}"
        for agent in affects:
            history = folder / "agents" / agent / "history.md"
            current = history.read_text(encoding="utf-8")
            if current and not current.endswith("\n"):
                current += "\n"
            history.write_text(current + line + "\n", encoding="utf-8")
            done.updates.setdefault(history, []).append(line)
    return done
