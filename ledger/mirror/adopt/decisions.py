"""`decisions.md`, the team's log: its new blocks adopted as decisions (a block Squad's Scribe appended
from a decided entry's file is that entry's decision); and `decisions-archive.md`, where blocks that
leave the log arrive."""

from __future__ import annotations

import re
from contextlib import suppress

from ledger import services
from ledger.mirror import fs, manifest, squad
from ledger.mirror.adopt.foreign import MAX_ADOPT_BYTES, counted, foreign_text, remember
from ledger.mirror.adopt.inbox import taken_by_squad
from ledger.mirror.paths import Layout
from ledger.mirror.render import key, sha
from ledger.mirror.reports import ImportReport
from ledger.mirror.squad import coverage
from ledger.models import Decision, DecisionStatus, EntryStatus, MirrorFile, Project


def adopt_decisions(
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
        report.adopted.append((path, f"would adopt {counted(len(new), 'decision block')}{kept}"))
        return [], gone
    taken = taken_by_squad(project, workspace, layout, files, new)
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
    remember(row, digest=digest, parts=parts, placed=set(parts.values()))
    retyped = sum(1 for b, d in zip(new, decisions, strict=True) if d.type != (b.type or project.squad_type))
    if retyped:
        kept += (
            f" ({counted(retyped, 'boundary', 'boundaries')} typed technical until a coordinator retypes it)"
        )
    held = sum(1 for d in decisions if d.held)
    if held:
        kept += f" ({counted(held, 'decision')} held for review)"
    report.adopted.append((path, f"{counted(len(decisions), 'decision')} adopted{kept}"))
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


def adopt_archive(
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
        what = f"would archive {counted(len(ids), 'decision')}, adopt {counted(len(new), 'archived block')}"
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
    remember(row, digest=digest, parts=parts, placed=set(parts.values()))
    if archived:
        titles = "; ".join(d.title for d in archived[:5]) + (" …" if len(archived) > 5 else "")
        report.archived.append(
            (path, f"{counted(len(archived), 'decision')} moved here from the log, archived: {titles}")
        )
    report.adopted.append((path, f"{counted(len(decisions), 'archived decision')} adopted"))
    report.lines.append((path, coverage.line_report(parsed).describe()))


_WHAT = re.compile(r"^\*\*What:\*\*[ \t]*(.+)$", re.MULTILINE)


def _block_title(block: squad.Block) -> str:
    """The block's title; a bare "User directive" heading says what the directive is."""
    what = _WHAT.search(block.body)
    if block.title.strip().casefold() == "user directive" and what:
        return f"User directive: {what.group(1).strip()}"
    return block.title
