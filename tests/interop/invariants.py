"""What must hold after every step when Canon and Squad's own program write the same `.squad/` folder.

A `Watch` takes a snapshot of the team's `.squad/` folder and, after each step (a write by Canon, by one of
Squad's commands or tools, or by the emulated Scribe), checks:

- every line anyone wrote stays: a line-level diff of every file in the tree. A non-blank line may leave a
  file only where its writer moves it (`squad nap` moves blocks to `decisions-archive.md` and history
  sections to `history-archive.md` and inbox files into `decisions.md`; the Scribe merges inbox files into
  `decisions.md` and drops blocks whose heading an earlier block has; `squad scrub-emails` replaces
  addresses). Canon may change only lines it wrote itself, may write only the files it mirrors, and may
  remove a team's inbox file only after a coordinator decided its entry and only once a copy of the file is
  in its backups (`CANON_DATA_DIR/backups/`);
- nothing is duplicated: no `### ` heading twice in `decisions.md` and `decisions-archive.md` together, no
  memory line twice in a history (beyond what the team had itself);
- no decision Canon wrote is lost: Squad's `parseDecisionsMarkdown` reads each exactly once in the log or
  its archive, an active one in the log, with its title (`{title} ({HH:MM:SS}Z, #{id})`), date and author;
  a decision merged from a team's inbox file word for word is that text, once, in the log or its archive;
- after Canon's steps, every memory Canon wrote is in exactly one history, in the section of its type, with
  its date, and Squad's `parseHistory` finds it there when it reads that section;
- `squad doctor` and `squad status` stay as green as they were on the team's fresh folder.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path

from ledger.models import AgentMemory, Decision, InboxEntry, MemoryStatus, Project, Source
from tests.interop import squad

TEAM = ".squad"
LOG = f"{TEAM}/decisions.md"
ARCHIVE = f"{TEAM}/decisions-archive.md"
INBOX = f"{TEAM}/decisions/inbox/"
_HISTORY = re.compile(rf"^{re.escape(TEAM)}/agents/([^/]+)/history\.md$")
# The files Canon mirrors; it writes nothing else.
_CANON_WRITES = re.compile(
    rf"^{re.escape(TEAM)}/(?:decisions\.md|decisions/inbox/[^/]+\.md|agents/[^/]+/history\.md|identity/now\.md)$"
)
# Squad's own `squad scrub-emails` patterns (squad-cli dist/cli/core/email-scrub.js).
_EMAIL = re.compile(r"([a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,})")
_NAME_WITH_EMAIL = re.compile(r"([a-zA-Z0-9_-]+)\s*\(([a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,})\)")
# The history sections a memory of each type may be written in, and the ones Squad's parseHistory reads.
MEMORY_SECTIONS = {
    "core_context": {"Core Context"},
    "learning": {"Learnings"},
    "update": {"Recent Updates", "Decisions"},
    "pattern": {"Patterns"},
}
SQUAD_SECTIONS = {
    "Context": "context",
    "Learnings": "learnings",
    "Decisions": "decisions",
    "Patterns": "patterns",
}

CANON = "canon"
SQUAD = "squad"
NAP = "nap"
SCRIBE = "scribe"
SCRUB = "scrub"


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root/.squad`, by its path relative to `root`."""
    folder = root / TEAM
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def text_of(files: dict[str, bytes], path: str) -> str:
    return files.get(path, b"").decode("utf-8")


def lines(data: bytes | None) -> Counter[str]:
    """The non-blank lines of a file, trailing spaces and line endings removed, with how often each occurs."""
    text = (data or b"").decode("utf-8", "replace")
    return Counter(line.rstrip() for line in text.split("\n") if line.strip())


def canon_heading_title(decision: Decision) -> str:
    """The title Squad's parser reads from the heading Canon writes for `decision`."""
    return f"{decision.title} ({decision.created_at.astimezone(UTC):%H:%M:%S}Z, #{decision.pk})"


def scrubbed(line: str) -> str:
    """`line` as `squad scrub-emails` rewrites it."""
    line = _NAME_WITH_EMAIL.sub(r"\1", line)
    skipped = ("http://", "https://", "```", "example.com")
    if any(s in line for s in skipped) or line.strip().startswith(("//", "#")):
        return line
    return _EMAIL.sub("[email scrubbed]", line)


def _destinations(writer: str, path: str) -> list[str]:
    """Where `writer` may move the lines of `path`."""
    history = _HISTORY.match(path)
    if writer == NAP:
        if path == LOG:
            return [ARCHIVE]
        if history:
            return [f"{TEAM}/agents/{history.group(1)}/history-archive.md"]
    if writer in (NAP, SCRIBE) and path.startswith(INBOX):
        return [LOG]
    return []


def _section_of(text_lines: list[str], index: int) -> tuple[str, str]:
    """The `#`/`##` section holding line `index`, and the nearest `###` heading above it in that section."""
    sub = ""
    for line in reversed(text_lines[: index + 1]):
        heading = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        if len(heading.group(1)) <= 2:
            return heading.group(2), sub
        if not sub and len(heading.group(1)) == 3:
            sub = line
    return "", sub


@dataclass
class Watch:
    """The team at `root`, mirrored by `project`, watched step by step (see the module docstring)."""

    root: Path
    project: Project
    data_dir: Path
    files: dict[str, bytes] = field(default_factory=dict)
    steps: list[str] = field(default_factory=list)
    canon_lines: dict[str, Counter[str]] = field(default_factory=dict)
    canon_files: set[str] = field(default_factory=set)
    headings: Counter[str] = field(default_factory=Counter)
    memory_lines: dict[str, Counter[str]] = field(default_factory=dict)
    doctor: squad.Doctor | None = None

    def __post_init__(self) -> None:
        self.files = snapshot(self.root)
        self.headings = self._headings(self.files)
        self.memory_lines = self._memory_lines(self.files)
        self.doctor = squad.doctor(self.root)
        assert self.doctor.code == 0 and not self.doctor.failed, self.doctor.output

    # -----------------------------------------------------------------------------------------
    # Steps

    def canon(self, what: str) -> None:
        """Check after Canon wrote (a sync, an export)."""
        self._step(CANON, what)

    def squad(self, what: str) -> None:
        """Check after one of Squad's tools or commands that moves nothing (`squad_decide`, `squad_memory`,
        `squad memory write`)."""
        self._step(SQUAD, what)

    def nap(self, what: str = "squad nap") -> None:
        self._step(NAP, what)

    def scribe(self, what: str, removed: list[str]) -> None:
        """Check after the emulated Scribe; `removed` are the duplicate blocks it dropped."""
        dropped: Counter[str] = Counter()
        for block in removed:
            dropped += lines(block.encode("utf-8"))
        self._step(SCRIBE, what, dropped=dropped)

    def scrub(self, what: str = "squad scrub-emails") -> None:
        self._step(SCRUB, what)

    def _step(self, writer: str, what: str, dropped: Counter[str] | None = None) -> None:
        self.steps.append(what)
        before, after = self.files, snapshot(self.root)
        problems = self._lines_kept(writer, before, after, dropped or Counter())
        if writer == CANON:
            problems += self._canon_files(before, after)
        problems += self._no_duplicates(after)
        problems += self._decisions_read(after, after_canon=writer == CANON)
        if writer == CANON:
            problems += self._memories_read(after)
        problems += self._squad_green()
        self._remember(writer, before, after)
        if problems:
            listed = "\n  - ".join(problems)
            raise AssertionError(f"after step {len(self.steps)} ({what}):\n  - {listed}")

    def _remember(self, writer: str, before: dict[str, bytes], after: dict[str, bytes]) -> None:
        for path in set(before) | set(after):
            if writer == CANON:
                added = lines(after.get(path)) - lines(before.get(path))
                self.canon_lines[path] = self.canon_lines.get(path, Counter()) + added
                if path not in before and path in after:
                    self.canon_files.add(path)
            elif before.get(path) != after.get(path):
                self.canon_files.discard(path)
            self.canon_lines[path] = self.canon_lines.get(path, Counter()) & lines(after.get(path))
        self.files = after

    # -----------------------------------------------------------------------------------------
    # Checks

    def _lines_kept(
        self, writer: str, before: dict[str, bytes], after: dict[str, bytes], dropped: Counter[str]
    ) -> list[str]:
        problems = []
        paths = sorted(set(before) | set(after))
        added = {p: lines(after.get(p)) - lines(before.get(p)) for p in paths}
        for path in paths:
            if writer != CANON and path.endswith((".json", ".jsonl")):
                continue  # Squad's own state (casting, memory index), which it rewrites as it likes
            if writer == CANON and path.startswith(INBOX) and path not in after:
                continue  # a whole inbox file Canon removed: `_canon_files` says whether it may
            lost = lines(before.get(path)) - lines(after.get(path))
            if not lost:
                continue
            if writer == CANON:
                lost -= self.canon_lines.get(path, Counter())
            for destination in _destinations(writer, path):
                moved = lost & added.get(destination, Counter())
                lost -= moved
                added[destination] = added.get(destination, Counter()) - moved
            if writer == SCRIBE and path == LOG:
                forgiven = lost & dropped
                lost -= forgiven
                dropped -= forgiven
            if writer == SCRUB:
                kept = added[path]
                lost = Counter(
                    {
                        line: n
                        for line, n in lost.items()
                        if not (_EMAIL.search(line) and kept[scrubbed(line)])
                    }
                )
            for line, count in sorted(lost.items()):
                times = f" ({count} times)" if count > 1 else ""
                problems.append(f"{path}: a line someone else wrote is gone{times}: {line[:200]!r}")
        return problems

    def _canon_files(self, before: dict[str, bytes], after: dict[str, bytes]) -> list[str]:
        problems = []
        for path in sorted(set(before) | set(after)):
            if before.get(path) == after.get(path):
                continue
            if not _CANON_WRITES.match(path):
                problems.append(f"{path}: Canon wrote a file it does not mirror")
                continue
            if path in after or not path.startswith(INBOX):
                continue
            name = path[len(INBOX) :]
            entry = InboxEntry.objects.filter(project=self.project, file=name).first()
            if entry is None or entry.status == "pending":
                problems.append(f"{path}: Canon removed an inbox file no coordinator decided")
            if path not in self.canon_files and not self._backed_up(name, before[path]):
                problems.append(f"{path}: Canon removed the team's inbox file without a copy in its backups")
        return problems

    def _backed_up(self, name: str, data: bytes) -> bool:
        backups = self.data_dir / "backups" / self.project.slug
        return any(copy.read_bytes() == data for copy in backups.rglob(name)) if backups.is_dir() else False

    def _headings(self, files: dict[str, bytes]) -> Counter[str]:
        found: Counter[str] = Counter()
        for path in (LOG, ARCHIVE):
            if path in files:
                found.update(e["heading"] for e in squad.split_entries(text_of(files, path))["entries"])
        return found

    def _memory_lines(self, files: dict[str, bytes]) -> dict[str, Counter[str]]:
        found = {}
        for path, data in files.items():
            if _HISTORY.match(path):
                found[path] = Counter(
                    {
                        line: n
                        for line, n in lines(data).items()
                        if not line.lstrip().startswith(("#", "<!--")) and line.strip() != "---"
                    }
                )
        return found

    def _no_duplicates(self, after: dict[str, bytes]) -> list[str]:
        problems = []
        for heading, count in sorted(self._headings(after).items()):
            if count > max(1, self.headings[heading]):
                problems.append(f"the heading {heading!r} is in decisions.md and its archive {count} times")
        for path, counted in sorted(self._memory_lines(after).items()):
            had = self.memory_lines.get(path, Counter())
            for line, count in sorted(counted.items()):
                if count > max(1, had[line]):
                    problems.append(f"{path}: the line {line[:120]!r} is there {count} times")
        return problems

    def _decisions_read(self, after: dict[str, bytes], *, after_canon: bool) -> list[str]:
        problems = []
        read = {path: squad.parse_decisions(text_of(after, path)) for path in (LOG, ARCHIVE)}
        canon_written = (
            Decision.objects.filter(project=self.project)
            .exclude(source=Source.IMPORT)
            .select_related("agent")
        )
        for decision in canon_written:
            where = f"decision #{decision.pk} ({decision.title!r}, {decision.status})"
            if decision.markdown:
                # Merged from a team's inbox file word for word: the team's text, as Squad's Scribe appends it.
                held = {
                    path: text_of(after, path).count(decision.markdown.strip()) for path in (LOG, ARCHIVE)
                }
                if sum(held.values()) != 1:
                    problems.append(
                        f"{where}: its team text is in the log and archive {sum(held.values())} times"
                    )
                elif after_canon and decision.status == "active" and not held[LOG]:
                    problems.append(f"{where}: active, but its block is not in decisions.md")
                continue
            title = canon_heading_title(decision)
            found = {path: [d for d in parsed if d["title"] == title] for path, parsed in read.items()}
            count = sum(len(f) for f in found.values())
            if count != 1:
                others = [
                    f"{path}: {d['title']!r} dated {d.get('date')!r} by {d.get('author')!r}"
                    for path, parsed in read.items()
                    for d in parsed
                    if decision.title in d["title"] and d["title"] != title
                ]
                problems.append(
                    f"{where}: Squad's parser reads {count} decisions titled {title!r}"
                    + (f"; it reads {others}" if others else "")
                )
                continue
            if after_canon and decision.status == "active" and not found[LOG]:
                problems.append(f"{where}: active, but its block is not in decisions.md")
            for block in found[LOG] + found[ARCHIVE]:
                date = f"{decision.created_at.astimezone(UTC):%Y-%m-%d}"
                if block.get("date") != date or block.get("author") != decision.agent.name:
                    problems.append(
                        f"{where}: Squad reads date {block.get('date')!r} and author {block.get('author')!r}, "
                        f"not {date!r} and {decision.agent.name!r}"
                    )
        return problems

    def _memories_read(self, after: dict[str, bytes]) -> list[str]:
        problems = []
        histories = {
            path: text_of(after, path)
            for path in after
            if re.match(rf"^{re.escape(TEAM)}/agents/[^/]+/history(?:-archive)?\.md$", path)
        }
        canon_written = (
            AgentMemory.objects.filter(project=self.project, status=MemoryStatus.ACTIVE)
            .exclude(source__in=[Source.IMPORT, Source.NOTES])
            .select_related("agent")
        )
        for memory in canon_written:
            first = memory.content.strip().splitlines()[0].strip()
            where = f"memory #{memory.pk} of {memory.agent.name} ({memory.type}, {first[:60]!r})"
            holders = [
                (path, index)
                for path, text in sorted(histories.items())
                for index, line in enumerate(text.split("\n"))
                if first in line
            ]
            if len(holders) != 1:
                problems.append(f"{where}: written {len(holders)} times: {sorted({p for p, _ in holders})}")
                continue
            path, index = holders[0]
            if not _HISTORY.match(path):
                continue  # moved to the archive by `squad nap`
            text_lines = histories[path].split("\n")
            section, sub = _section_of(text_lines, index)
            if section not in MEMORY_SECTIONS[memory.type]:
                problems.append(f"{where}: in the section {section!r} of {path}")
            date = f"{memory.created_at.astimezone(UTC):%Y-%m-%d}"
            if date not in text_lines[index] and date not in sub:
                problems.append(f"{where}: {path} does not give its date {date}")
            key = SQUAD_SECTIONS.get(section)
            if key and first not in squad.parse_history(histories[path]).get(key, ""):
                problems.append(f"{where}: Squad's parseHistory does not read it in {section!r} of {path}")
        return problems

    def _squad_green(self) -> list[str]:
        assert self.doctor is not None
        problems = []
        doctor = squad.doctor(self.root)
        lost = self.doctor.passed - doctor.passed
        if doctor.code != 0 or doctor.failed or lost:
            problems.append(
                f"squad doctor is no longer green (exit {doctor.code}, failed {sorted(doctor.failed)}, "
                f"no longer passing {sorted(lost)}):\n{doctor.output}"
            )
        status = squad.status(self.root)
        if status.code != 0 or "Active squad: repo" not in status.stdout:
            problems.append(f"squad status no longer finds the team (exit {status.code}):\n{status.stdout}")
        return problems
