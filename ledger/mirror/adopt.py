"""Import: the team's files read into the ledger before anything is rendered.

A file Canon last wrote or adopted, byte for byte, has nothing new and is not parsed. Any other file is
someone else's: its parts Canon already knows (by the sha256 of their text) are matched, and each new
part becomes a row whose text is kept verbatim:

- `decisions.md`: one decision per block;
- `decisions/inbox/*.md`: one pending entry per file, with or without front matter; the file keeps its
  name and stays the entry's file. An inbox file that disappeared after Squad's Scribe merged it into
  `decisions.md` marks its entry merged, linked to the block that took it in;
- `agents/{folder}/history.md`: one memory per bullet or paragraph of a typed section;
- `identity/now.md`: the open session's focus and issues from the front matter;
- notes files, `agents/{folder}/memory/*.md` and `memory/*.md`: read only (`ledger.mirror.notes`).

Rows are created only for content the ledger does not have (union); existing rows are never changed by
import, except that the open session follows `now.md`. A file that cannot be read safely (a link, too
large, not UTF-8, a NUL character, YAML aliases) is skipped, reported, and left untouched by the export.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime
from difflib import SequenceMatcher
from typing import Any, TypeVar

from django.utils import timezone

from ledger import services
from ledger.mirror import fs, manifest, notes, squad
from ledger.mirror.paths import Layout
from ledger.mirror.render import key, sha
from ledger.mirror.reports import ImportReport
from ledger.mirror.squad import coverage
from ledger.models import (
    Agent,
    AgentMemory,
    Decision,
    DecisionStatus,
    EntryStatus,
    EntryType,
    InboxEntry,
    MemoryStatus,
    MirrorFile,
    Project,
    Session,
)
from ledger.values import InvalidValue, agent_key, agent_segment

MAX_IMPORT_BYTES = 256 * 1024
# A team's whole decision log or an agent's history (the largest seen are ~130 KB).
MAX_ADOPT_BYTES = 8 * 1024 * 1024


# ---------------------------------------------------------------------------------------------
# Reading a file that may be someone else's


def foreign_text(
    workspace: fs.Workspace, path: str, known: MirrorFile | None, report: ImportReport, *, limit: int
) -> tuple[str, str] | None:
    """(text, sha256) of the file at `path` when someone else changed it since Canon last wrote or
    adopted it; None when it is absent, unchanged, or cannot be read safely (then it is reported)."""
    try:
        data = workspace.read(path, max_bytes=limit)
    except fs.UnsafePath as exc:
        report.skipped.append((path, str(exc)))
        return None
    except fs.FileTooLarge:
        report.skipped.append((path, f"too large (over {limit} bytes)"))
        return None
    if data is None:
        return None
    digest = sha(data)
    if known is not None and known.owns(digest):
        report.unchanged.append(path)
        return None
    if not data.strip():
        report.skipped.append((path, "empty file"))
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        report.skipped.append((path, "not UTF-8"))
        return None
    if dropped := control_characters(text):
        report.cleaned.append((path, dropped))
    return text, digest


def control_characters(text: str) -> str:
    """What a report says of the control characters in `text` ("" when none): how many were dropped and
    where, e.g. "dropped 2 control characters: U+0000 on line 14, U+001B on line 30"."""
    found = [(m.group(), text.count("\n", 0, m.start()) + 1) for m in squad.CONTROL.finditer(text)]
    if not found:
        return ""
    shown = ", ".join(f"U+{ord(char):04X} on line {line}" for char, line in found[:5])
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    return f"dropped {_count(len(found), 'control character')}: {shown}{more}"


def _count(n: int, one: str, many: str = "") -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def _remember(row: MirrorFile, *, digest: str, parts: dict[str, str], placed: set[str]) -> None:
    row.adopted_sha256 = digest
    row.adopted_at = row.adopted_at or timezone.now()
    row.parts = parts
    row.placed = sorted(set(row.placed) | placed)
    row.save()


# ---------------------------------------------------------------------------------------------
# decisions.md


def _adopt_decisions(
    project: Project,
    workspace: fs.Workspace,
    layout: Layout,
    files: dict[str, MirrorFile],
    report: ImportReport,
    people: list[str],
) -> tuple[list[Decision], dict[str, str]]:
    """The log's new blocks adopted as decisions; and the blocks Canon knew in the log that are no longer
    there (sha256 of their text -> the decision's key), for the archive to recognise."""
    path = layout.decisions
    known = files.get(path)
    previous = dict(known.parts) if known is not None else {}
    found = foreign_text(workspace, path, known, report, limit=MAX_ADOPT_BYTES)
    if found is None:
        return [], {}
    text, digest = found
    # Only the log Canon meets for the first time is adopted as the coordinator asked for it; anything
    # added to a log Canon already wrote or adopted comes from whoever can write to the repository.
    first_contact = path not in files
    row = manifest.entry(project, files, path)
    parsed = squad.parse_decisions(text, known_people=people)
    blocks = [part for part in parsed if isinstance(part, squad.Block)]
    present = {sha(b.text) for b in blocks}
    gone = {digest: key for digest, key in previous.items() if digest not in present}
    parts = {sha(b.text): row.parts[sha(b.text)] for b in blocks if sha(b.text) in row.parts}
    new = list({sha(b.text): b for b in blocks if sha(b.text) not in parts}.values())
    kept = "" if blocks else " (no decision blocks found; kept as it is)"
    if report.dry_run:
        report.adopted.append((path, f"would adopt {_count(len(new), 'decision block')}{kept}"))
        return [], gone
    taken = _taken_by_squad(project, workspace, layout, files, new)
    for digest_of_block, entry in taken.items():
        if entry.status == EntryStatus.MERGED and entry.decision is not None:
            # The merged decision's block is the one Squad appended: known by it, written as it is.
            block = next(b for b in new if sha(b.text) == digest_of_block)
            with suppress(services.LedgerError):
                services.entry_file_text_keep(
                    project=project, entry=entry, markdown=squad.without_controls(block.text)
                )
            parts[digest_of_block] = key(entry.decision)
            report.merged.append(
                (layout.inbox_file(entry.file), f"{entry.slug!r}: the block Squad appended is its decision")
            )
    new = [b for b in new if not (sha(b.text) in taken and taken[sha(b.text)].status == EntryStatus.MERGED)]
    try:
        decisions = services.decisions_adopt(
            project=project,
            boundaries=first_contact,
            # A rejected proposal Squad appended anyway is kept as history, never as a decision in force.
            items=[_adopted_block(b, DecisionStatus.ARCHIVED if sha(b.text) in taken else "") for b in new],
            origin=path,
        )
    except services.Conflict as exc:
        # An author whose name looks like another agent's: nothing of the log is adopted until it is fixed.
        report.skipped.append((path, f"{exc.message}; left untouched"))
        return [], {}
    parts.update({sha(b.text): key(d) for b, d in zip(new, decisions, strict=True)})
    _remember(row, digest=digest, parts=parts, placed=set(parts.values()))
    retyped = sum(1 for b, d in zip(new, decisions, strict=True) if d.type != (b.type or project.squad_type))
    if retyped:
        kept += (
            f" ({_count(retyped, 'boundary', 'boundaries')} typed technical until a coordinator retypes it)"
        )
    held = sum(1 for d in decisions if d.held)
    if held:
        kept += f" ({_count(held, 'decision')} held for review)"
    report.adopted.append((path, f"{_count(len(decisions), 'decision')} adopted{kept}"))
    report.lines.append((path, coverage.line_report(parsed).describe()))
    return decisions, gone


def _adopted_block(block: squad.Block, status: str = "") -> services.Adopted:
    return services.Adopted(
        markdown=squad.without_controls(block.text),
        content=squad.without_controls(block.body),
        type=block.type,
        author=squad.without_controls(block.author),
        title=squad.without_controls(_block_title(block)),
        date=block.date,
        status=status or block.status,
    )


def _adopt_archive(
    project: Project,
    workspace: fs.Workspace,
    layout: Layout,
    files: dict[str, MirrorFile],
    report: ImportReport,
    people: list[str],
    moved: dict[str, str],
) -> None:
    """`decisions-archive.md`, which Squad's `nap` fills with the blocks it moves out of the log. Canon
    only reads it: a block that left the log for it archives its decision; a block the ledger has never
    held is adopted as an archived decision (history, never context)."""
    path = layout.decisions_archive
    found = foreign_text(workspace, path, files.get(path), report, limit=MAX_ADOPT_BYTES)
    if found is None:
        return
    text, digest = found
    row = manifest.entry(project, files, path)
    parsed = squad.parse_decisions(text, known_people=people)
    blocks = [part for part in parsed if isinstance(part, squad.Block)]
    by_digest = {sha(b.text): b for b in blocks}
    parts = {d: row.parts[d] for d in by_digest if d in row.parts}
    arrived = {d: moved[d] for d in by_digest if d not in parts and d in moved}
    new = [b for d, b in by_digest.items() if d not in parts and d not in arrived]
    ids = [int(k.split(":", 1)[1]) for k in arrived.values() if k.startswith("decision:")]
    if report.dry_run:
        what = f"would archive {_count(len(ids), 'decision')}, adopt {_count(len(new), 'archived block')}"
        report.adopted.append((path, what))
        return
    try:
        archived = services.decisions_archived_outside(project=project, decision_ids=ids, origin=path)
        decisions = services.decisions_adopt(
            project=project,
            boundaries=False,
            items=[_adopted_block(b, DecisionStatus.ARCHIVED) for b in new],
            origin=path,
        )
    except services.Conflict as exc:
        report.skipped.append((path, f"{exc.message}; left untouched"))
        return
    parts.update(arrived)
    parts.update({sha(b.text): key(d) for b, d in zip(new, decisions, strict=True)})
    _remember(row, digest=digest, parts=parts, placed=set(parts.values()))
    if archived:
        titles = "; ".join(d.title for d in archived[:5]) + (" …" if len(archived) > 5 else "")
        report.archived.append(
            (path, f"{_count(len(archived), 'decision')} moved here from the log, archived: {titles}")
        )
    report.adopted.append((path, f"{_count(len(decisions), 'archived decision')} adopted"))
    report.lines.append((path, coverage.line_report(parsed).describe()))


_WHAT = re.compile(r"^\*\*What:\*\*[ \t]*(.+)$", re.MULTILINE)


def _block_title(block: squad.Block) -> str:
    """The block's title; a bare "User directive" heading says what the directive is."""
    what = _WHAT.search(block.body)
    if block.title.strip().casefold() == "user directive" and what:
        return f"User directive: {what.group(1).strip()}"
    return block.title


# ---------------------------------------------------------------------------------------------
# decisions/inbox/*.md


@dataclass
class Proposal:
    agent: str
    slug: str
    type: str
    title: str
    content: str
    rationale: str
    tags: Any = None
    importance: str | None = None
    run_id: str = ""
    date: datetime | None = None


def parse_front_matter_proposal(front: str, body: str) -> Proposal:
    """An inbox file with front matter (`agent`, `slug`, `type`, `title`; body split at the first
    `**Rationale:**`), or ValueError with the reason it cannot be imported."""
    try:
        meta = squad.load_yaml(front.strip().strip("-"))
    except squad.FrontMatterError as exc:
        raise ValueError(str(exc)) from exc
    for name in ("agent", "slug", "type"):
        value = meta.get(name)
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"missing key: {name}")
    if meta["type"] not in EntryType.values:
        raise ValueError(f"bad type: {meta['type']!r}")
    content, marker, rationale = body.partition("**Rationale:**")
    content, rationale = content.strip(), rationale.strip() if marker else ""
    if not content:
        raise ValueError("no content after the front matter")
    title = meta.get("title")
    importance = meta.get("importance")
    run_id = meta.get("run_id")
    return Proposal(
        agent=meta["agent"],
        slug=meta["slug"],
        type=meta["type"],
        title=str(title).strip() if title is not None else "",
        content=content,
        rationale=rationale,
        tags=meta.get("tags"),
        importance=importance if isinstance(importance, str) else None,
        run_id=str(run_id) if run_id is not None else "",
    )


def parse_inbox_file(project: Project, name: str, text: str, agent_folders: list[str]) -> Proposal:
    """Any shape of inbox file as a proposal; ValueError with the reason when it cannot be one.

    - front matter with `agent` and `slug` (Canon's files before it wrote Squad's own shape);
    - front matter with `author` and `class` (what `squad memory write` puts in the inbox);
    - no front matter: Squad's own shapes, Canon's included (`squad.parse_native_proposal`).
    """
    text = squad.without_controls(text.removeprefix("\ufeff"))
    split = squad.split_front_matter(text.lstrip("\r\n"))
    if split is not None:
        try:
            meta = squad.load_yaml(split[0].strip().strip("-"))
        except squad.FrontMatterError as exc:
            raise ValueError(str(exc)) from exc
        if "agent" not in meta and "author" in meta and "class" in meta:
            return _from_native(project, squad.parse_squad_memory(name, meta, split[1]))
        proposal = parse_front_matter_proposal(*split)
        slug = squad.slug_from_filename(f"{proposal.slug}.md")
        if not slug:
            raise ValueError(f"bad slug: {proposal.slug!r} has no letters or digits")
        proposal.slug = slug
        return proposal
    return _from_native(project, squad.parse_native_proposal(name, text, agent_folders))


def _from_native(project: Project, native: squad.Proposal) -> Proposal:
    if not native.slug:
        raise ValueError("bad slug: the file name has no letters or digits")
    content = native.content or native.title
    if not content.strip():
        raise ValueError("no content")
    return Proposal(
        agent=services.adopted_agent_name(native.agent),
        slug=native.slug,
        type=native.type or project.squad_type,
        title=native.title,
        content=content,
        rationale=native.rationale,
        tags=list(native.tags) or None,
        importance=native.importance or None,
        run_id=native.run_id,
        date=native.date,
    )


def _normalised(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text.casefold()).strip()


def _words(text: str) -> set[str]:
    return set(_normalised(text).split())


_Candidate = TypeVar("_Candidate")

# How much of an entry's wording a block must hold to be the one Squad's Scribe merged it into.
MERGED_OVERLAP = 0.9


def _merged_into(
    entry: InboxEntry, candidates: list[_Candidate], text: Callable[[_Candidate], tuple[str, str]]
) -> _Candidate | None:
    """The new block that took in this entry's text: the one holding most of its words (at least 90%),
    else one with the same title. `text` gives a candidate's (title, whole text)."""
    wanted = _words(f"{entry.title} {entry.content} {entry.rationale}")
    best, score = None, MERGED_OVERLAP
    for candidate in candidates:
        overlap = len(wanted & _words(text(candidate)[1])) / len(wanted) if wanted else 0
        if overlap >= score:
            best, score = candidate, overlap
    if best is not None:
        return best
    title = _normalised(entry.title)
    return next((c for c in candidates if title and _normalised(text(c)[0]) == title), None)


def _decision_text(decision: Decision) -> tuple[str, str]:
    return decision.title, decision.markdown


def _block_text(block: squad.Block) -> tuple[str, str]:
    return block.title, block.text


def _taken_by_squad(
    project: Project,
    workspace: fs.Workspace,
    layout: Layout,
    files: dict[str, MirrorFile],
    new: list[squad.Block],
) -> dict[str, InboxEntry]:
    """New blocks of the log that are a decided entry's team file, which Squad took into the log before
    Canon's export took it out of the inbox (sha256 of the block -> the entry): the file is gone, and the
    block holds its words."""
    prefix = layout.inbox + "/"
    gone = [
        path[len(prefix) :]
        for path, row in files.items()
        if path.startswith(prefix) and row.adopted and workspace.kind(path) == "absent"
    ]
    if not gone or not new:
        return {}
    taken: dict[str, InboxEntry] = {}
    candidates = list(new)
    decided = InboxEntry.objects.filter(project=project, file__in=gone).exclude(status=EntryStatus.PENDING)
    for entry in decided.select_related("decision"):
        block = _merged_into(entry, candidates, _block_text)
        if block is not None:
            taken[sha(block.text)] = entry
            candidates.remove(block)
    return taken


def _import_inbox(
    project: Project,
    workspace: fs.Workspace,
    layout: Layout,
    files: dict[str, MirrorFile],
    report: ImportReport,
    adopted: list[Decision],
    progress: Callable[[str], None] | None,
) -> None:
    kind = workspace.kind(layout.inbox)
    if kind not in ("dir", "absent"):
        report.skipped.append((layout.inbox, "a symbolic link" if kind == "link" else "not a folder"))
        return
    names = [n for n in workspace.files(layout.inbox) if not n.startswith(fs.TEMP_PREFIX)]
    agent_folders = workspace.folders(layout.agents) if workspace.kind(layout.agents) == "dir" else []
    by_file = {e.file: e for e in InboxEntry.objects.filter(project=project).exclude(file="")}
    parsed: list[tuple[str, str, Proposal]] = []
    for name in names:
        path = layout.inbox_file(name)
        if progress:
            progress(path)
        kind = workspace.kind(path)
        if kind != "file":
            report.skipped.append((path, "a symbolic link" if kind == "link" else "not a regular file"))
            continue
        found = foreign_text(workspace, path, files.get(path), report, limit=MAX_IMPORT_BYTES)
        if found is None:
            continue
        text, digest = found
        if name in by_file:
            earlier = by_file[name]
            if earlier.status == EntryStatus.PENDING or path in files:
                report.conflicts.append(
                    (path, f"edited since it was imported as {earlier.slug!r}; the ledger keeps its text")
                )
                continue
            # Canon took the decided entry's file out of the inbox; this is a new file under that name.
            if not report.dry_run:
                services.entry_file_release(project=project, entry_id=earlier.pk)
            del by_file[name]
        try:
            proposal = parse_inbox_file(project, name, text, agent_folders)
        except ValueError as exc:
            report.skipped.append((path, str(exc)))
            continue
        parsed.append((name, digest, proposal))
    _create_entries(project, layout, files, report, parsed)
    _gone_inbox_files(project, layout, files, report, set(names), by_file, adopted)


def _create_entries(
    project: Project,
    layout: Layout,
    files: dict[str, MirrorFile],
    report: ImportReport,
    parsed: list[tuple[str, str, Proposal]],
) -> None:
    existing = {
        e.slug: e
        for e in InboxEntry.objects.select_related("agent").filter(
            project=project, slug__in=[p.slug for _, _, p in parsed]
        )
    }
    claimed: dict[str, str] = {}
    for name, digest, proposal in parsed:
        path = layout.inbox_file(name)
        if proposal.slug in claimed:
            report.conflicts.append(
                (path, f"slug {proposal.slug!r} is also claimed by {claimed[proposal.slug]}")
            )
            continue
        claimed[proposal.slug] = path
        entry = existing.get(proposal.slug)
        if entry is not None and _same_text(entry, proposal):
            report.unchanged.append(path)
            if not report.dry_run:
                _remember(manifest.entry(project, files, path), digest=digest, parts={}, placed=set())
            continue
        if entry is not None:
            free = (
                _free_slug(project, proposal)
                if entry.status != EntryStatus.PENDING and entry.file != name
                else None
            )
            if free is None:
                report.conflicts.append(
                    (path, f"the ledger already has {proposal.slug!r} ({entry.status}) with other text")
                )
                continue
            # A new proposal under a decided entry's slug, whose file has left the inbox: de-collided as
            # every proposal is (`{slug}--{agent}`).
            proposal.slug = free
        if report.dry_run:
            report.created.append(proposal.slug)
            continue
        try:
            created = services.entry_import(
                project=project,
                agent_name=proposal.agent,
                slug=proposal.slug,
                type=proposal.type,
                title=proposal.title[: services.TITLE_MAX_LENGTH],
                content=proposal.content,
                rationale=proposal.rationale,
                tags=proposal.tags,
                importance=proposal.importance,
                run_id=proposal.run_id,
                file=name,
                created_at=proposal.date,
            )
        except services.Conflict as exc:
            report.conflicts.append((path, exc.message))
            continue
        except services.LedgerError as exc:
            report.skipped.append((path, exc.message))
            continue
        _remember(
            manifest.entry(project, files, path),
            digest=digest,
            parts={digest: f"entry:{created.pk}"},
            placed=set(),
        )
        report.created.append(created.slug)


def _free_slug(project: Project, proposal: Proposal) -> str | None:
    """The first of `{slug}--{agent}`, `{slug}--{agent}--2`, … no entry of the project has; None when none
    of the first hundred is free."""
    try:
        segment = agent_segment(services.adopted_agent_name(proposal.agent))
    except InvalidValue:
        return None
    base = f"{proposal.slug}--{segment}"
    taken = set(
        InboxEntry.objects.filter(project=project, slug__startswith=base).values_list("slug", flat=True)
    )
    return next((c for c in (base, *(f"{base}--{n}" for n in range(2, 101))) if c not in taken), None)


def _same_text(entry: InboxEntry, proposal: Proposal) -> bool:
    try:
        same_agent = entry.agent.key == agent_key(proposal.agent)
    except InvalidValue:
        return False
    return (
        same_agent
        and entry.type == proposal.type
        and entry.title.strip() == proposal.title
        and entry.content.strip() == proposal.content.strip()
        and entry.rationale.strip() == proposal.rationale.strip()
    )


def _gone_inbox_files(
    project: Project,
    layout: Layout,
    files: dict[str, MirrorFile],
    report: ImportReport,
    present: set[str],
    by_file: dict[str, InboxEntry],
    adopted: list[Decision],
) -> None:
    """Inbox files Canon knew that are gone: merged into the log by someone else, or removed."""
    prefix = layout.inbox + "/"
    gone = [p for p in files if p.startswith(prefix) and p[len(prefix) :] not in present]
    if not gone:
        return
    # Squad's Scribe appends the block and deletes the file in one commit: the block is new in this import.
    candidates = list(adopted)
    for path in gone:
        entry = by_file.get(path[len(prefix) :])
        if entry is not None and entry.status == EntryStatus.PENDING:
            decision = _merged_into(entry, candidates, _decision_text)
            if decision is not None:
                if not report.dry_run:
                    services.entry_merged_outside(
                        project=project, entry_id=entry.pk, decision=decision, by="squad (decisions.md)"
                    )
                    candidates.remove(decision)
                report.merged.append(
                    (path, f"{entry.slug!r} merged into {layout.decisions}: {decision.title}")
                )
            else:
                report.skipped.append(
                    (
                        path,
                        f"removed outside Canon; {entry.slug!r} stays pending, its file is not written again",
                    )
                )
        if not report.dry_run and files[path].pk is not None:
            files.pop(path).delete()


# ---------------------------------------------------------------------------------------------
# agents/{folder}/history.md and identity/now.md


def _adopt_histories(
    project: Project,
    workspace: fs.Workspace,
    layout: Layout,
    files: dict[str, MirrorFile],
    report: ImportReport,
    progress: Callable[[str], None] | None,
) -> None:
    if workspace.kind(layout.agents) != "dir":
        return
    for folder in workspace.folders(layout.agents):
        path = layout.history(folder)
        if progress:
            progress(path)
        known = files.get(path)
        previous = dict(known.parts) if known is not None else {}
        found = foreign_text(workspace, path, known, report, limit=MAX_ADOPT_BYTES)
        if found is None:
            continue
        text, digest = found
        row = manifest.entry(project, files, path)
        parsed = squad.parse_history(text)
        entries = [part for part in parsed if isinstance(part, squad.Entry)]
        parts = {sha(e.text): row.parts[sha(e.text)] for e in entries if sha(e.text) in row.parts}
        new = list({sha(e.text): e for e in entries if sha(e.text) not in parts}.values())
        if report.dry_run:
            report.adopted.append((path, f"would adopt {_count(len(new), 'memory', 'memories')}"))
            continue
        gone = {d: k for d, k in previous.items() if d not in parts and k.startswith("agentmemory:")}
        for moved in _history_archive(
            project, workspace, layout.history_archive(folder), files, report, gone
        ):
            gone.pop(moved)
        try:
            agent = row.agent if row.agent is not None else _folder_agent(project, folder)
            memories = services.memories_adopt(
                project=project,
                agent_name=agent.name,
                items=[
                    services.Adopted(
                        markdown=squad.without_controls(e.text),
                        content=squad.without_controls(e.content),
                        type=e.type,
                        date=e.date,
                    )
                    for e in new
                ],
                origin=path,
            )
        except services.Conflict as exc:
            # A folder named like another agent (look-alike letters): that history waits, the rest goes on.
            report.skipped.append((path, f"{exc.message}; left untouched"))
            continue
        parts.update({sha(e.text): key(m) for e, m in zip(new, memories, strict=True)})
        row.agent = agent
        _remember(row, digest=digest, parts=parts, placed=set(parts.values()))
        edited = services.memories_edited_outside(
            project=project, replaced=_edited_in_place(project, list(gone.values()), memories), origin=path
        )
        for old, replacement in edited:
            report.edited.append(
                (path, f"memory {old.pk} edited in the file; memory {replacement.pk} holds the edited text")
            )
        report.adopted.append((path, f"{_count(len(memories), 'memory', 'memories')} adopted"))
        report.lines.append((path, coverage.line_report(parsed).describe()))


def _history_archive(
    project: Project,
    workspace: fs.Workspace,
    path: str,
    files: dict[str, MirrorFile],
    report: ImportReport,
    gone: dict[str, str],
) -> list[str]:
    """`agents/{folder}/history-archive.md`, where Squad's `nap` moves the older sections of a history
    over 15 KB. Canon only reads it: a memory whose entry left the history for it is archived. Returns
    the sha256 of the entries that arrived there (keys of `gone`)."""
    found = foreign_text(workspace, path, files.get(path), report, limit=MAX_ADOPT_BYTES)
    if found is None:
        return []
    text, digest = found
    entries = [part for part in squad.parse_history(text) if isinstance(part, squad.Entry)]
    arrived = {sha(e.text): gone[sha(e.text)] for e in entries if sha(e.text) in gone}
    ids = [int(k.split(":", 1)[1]) for k in arrived.values()]
    archived = services.memories_archived_outside(project=project, memory_ids=ids, origin=path)
    row = manifest.entry(project, files, path)
    parts = {**{d: k for d, k in row.parts.items() if d in {sha(e.text) for e in entries}}, **arrived}
    _remember(row, digest=digest, parts=parts, placed=set(parts.values()))
    if archived:
        report.archived.append((path, f"{_count(len(archived), 'memory', 'memories')} moved here, archived"))
    return list(arrived)


# How alike a line someone edited must stay to its old text to count as the same memory edited.
EDITED_LIKENESS = 0.6


def _edited_in_place(
    project: Project, gone: list[str], adopted: list[AgentMemory]
) -> list[tuple[AgentMemory, AgentMemory]]:
    """Pairs (old, new): a memory whose text left the file and a memory adopted from the file in the same
    import whose text is at least `EDITED_LIKENESS` alike (an address scrubbed, a typo fixed); each memory
    in at most one pair, most alike first."""
    if not gone or not adopted:
        return []
    ids = [int(k.split(":", 1)[1]) for k in gone]
    olds = list(
        AgentMemory.objects.filter(project=project, pk__in=ids, status=MemoryStatus.ACTIVE).only(
            "pk", "content", "status", "agent_id"
        )
    )
    scored = []
    for old in olds:
        for new in adopted:
            if new.agent_id != old.agent_id:
                continue
            matcher = SequenceMatcher(None, old.content, new.content, autojunk=False)
            if matcher.real_quick_ratio() >= EDITED_LIKENESS and matcher.quick_ratio() >= EDITED_LIKENESS:
                ratio = matcher.ratio()
                if ratio >= EDITED_LIKENESS:
                    scored.append((ratio, old, new))
    pairs = []
    taken_old: set[int] = set()
    taken_new: set[int] = set()
    for _, old, new in sorted(scored, key=lambda item: -item[0]):
        if old.pk not in taken_old and new.pk not in taken_new:
            pairs.append((old, new))
            taken_old.add(old.pk)
            taken_new.add(new.pk)
    return pairs


def _folder_agent(project: Project, folder: str) -> Agent:
    return services.agent_get_or_create(project=project, name=services.adopted_agent_name(folder))


def _adopt_now(
    project: Project,
    workspace: fs.Workspace,
    layout: Layout,
    files: dict[str, MirrorFile],
    report: ImportReport,
) -> None:
    path = layout.now
    found = foreign_text(workspace, path, files.get(path), report, limit=MAX_IMPORT_BYTES)
    if found is None:
        return
    text, digest = found
    split = squad.split_front_matter(text.removeprefix("\ufeff"))
    meta: dict[str, Any] = {}
    if split is not None:
        try:
            meta = squad.load_yaml(split[0].strip().strip("-"))
        except squad.FrontMatterError as exc:
            report.skipped.append((path, f"{exc}; left untouched"))
            return
    focus = meta.get("focus_area")
    issues = meta.get("active_issues")
    values: dict[str, Any] = {}
    if isinstance(focus, str | int | float) and not isinstance(focus, bool):
        values["focus_area"] = str(focus)
    if isinstance(issues, list):
        values["active_issues"] = [str(i) for i in issues if isinstance(i, str | int | float)]
    if report.dry_run:
        report.adopted.append((path, "would adopt the current focus"))
        return
    try:
        if values:
            current = Session.objects.filter(project=project, ended_at__isnull=True).first()
            if current is None:
                services.session_start(project=project, **values, by=path)
            elif any(getattr(current, k) != v for k, v in values.items()):
                services.session_update_current(project=project, **values, by=path)
    except services.LedgerError as exc:
        report.skipped.append((path, f"{exc.message}; left untouched"))
        return
    _remember(manifest.entry(project, files, path), digest=digest, parts={}, placed=set())
    report.adopted.append((path, "the current focus adopted" if values else "kept as it is (no focus in it)"))


# ---------------------------------------------------------------------------------------------


def _known_people(project: Project, workspace: fs.Workspace, layout: Layout) -> list[str]:
    """The names a `— Name:` part of a block heading may be: the agent folders and the ledger's agents."""
    folders = workspace.folders(layout.agents) if workspace.kind(layout.agents) == "dir" else []
    return sorted({*folders, *Agent.objects.filter(project=project).values_list("name", flat=True)})


def import_project(
    project: Project, *, dry_run: bool = False, progress: Callable[[str], None] | None = None
) -> ImportReport:
    """Read the team's files into the ledger (see the module docstring). MirrorError if the workspace
    is unusable."""
    root = manifest.workspace_root(project)
    report = ImportReport(dry_run=dry_run)
    with manifest.project_lock(project), fs.Workspace(root) as workspace:
        layout = Layout.of(workspace)
        if workspace.kind(layout.team) == "link":
            report.skipped.append((layout.team, "a symbolic link; nothing under it is read"))
            return report
        files = manifest.load(project, workspace, dry_run=dry_run)
        if progress:
            progress(layout.decisions)
        people = _known_people(project, workspace, layout)
        adopted, moved = _adopt_decisions(project, workspace, layout, files, report, people)
        _adopt_archive(project, workspace, layout, files, report, people, moved)
        _import_inbox(project, workspace, layout, files, report, adopted, progress)
        _adopt_histories(project, workspace, layout, files, report, progress)
        _adopt_now(project, workspace, layout, files, report)
        notes.index_private_notes(
            project, workspace, layout, files, report, limit=MAX_IMPORT_BYTES, progress=progress
        )
        notes.index_team_notes(project, workspace, layout, report, limit=MAX_IMPORT_BYTES, progress=progress)
    return report
