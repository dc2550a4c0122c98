"""The ledger as files, in the team's own style, byte for byte the same for the same ledger and files.

A file Canon alone has written is rendered afresh. A file it adopted is rendered from the file as it
stands: every part Canon does not know is kept verbatim in place, every adopted part is the team's text
exactly (with a one-line note when the ledger changed its status), and the rows the file has never
held are added where the team's format puts them. A row someone else removed from the file is not put
back. A row adopted from a file (its `origin`) is rendered in that file only; a row no file gave
(Canon's own) is added to one file: the log, or its agent's home history. Each rendering returns the
parts it placed, by the sha256 of their text, so the next import recognises them, and the text of each
row in the order the file holds them (`Rendered.order`), so that the next export finds them again
(`ledger.mirror.pieces`).

The layout of a file is decided here from the rows; the text of one row comes from `text`, which the
export gives from what it kept of the file before (`ledger.mirror.sources`) or renders with
`decision_text`, `memory_text`, `boundary_text` and `pattern_text` below. The rows may be the models or
the export's light rows (`ledger.mirror.sources`): the layout reads only their keys, origins, states
and types.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, Protocol

from ledger.mirror import squad
from ledger.models import (
    BOUNDARY_TYPES,
    Agent,
    AgentMemory,
    Decision,
    DecisionStatus,
    InboxEntry,
    MemoryStatus,
    MemoryType,
    Session,
    Source,
)
from ledger.untrusted import block, one_line
from ledger.values import agent_segment

DECISIONS_PREAMBLE = "# Squad Decisions\n"
# The heading level of the blocks Canon writes (`### {date}: {title}`).
NEW_BLOCK_LEVEL = 3


def as_written(written: str, rendered: str) -> str:
    """A known part's text in the file as it stands when the ledger's rendering of it differs only by the
    control characters the ledger drops (`squad.without_controls`); else the rendering."""
    return written if rendered != written and rendered == squad.without_controls(written) else rendered


def sha(text: str | bytes) -> str:
    return hashlib.sha256(text.encode("utf-8") if isinstance(text, str) else text).hexdigest()


def _digest(key: str, text: str) -> str:
    return sha(text)


class Row(Protocol):
    """A decision or a memory as the layout of a file reads it: a model, or an export's light row."""

    pk: Any
    origin: str
    status: str
    type: str


def key(row: Any) -> str:
    """The row's key in the manifest: "decision:12", "agentmemory:7" (a light row holds its own)."""
    try:
        return str(row.mirror_key)
    except AttributeError:
        return f"{type(row).__name__.lower()}:{row.pk}"


def has_markdown(row: Any) -> bool:
    """Whether the row holds the team's own text (`markdown`); a light row knows only its length."""
    try:
        return bool(row.markdown_length > 0)
    except AttributeError:
        return bool(row.markdown)


@dataclass
class Rendered:
    """A file's new text, and what Canon knows of its parts (see `MirrorFile.parts` / `.placed`); and the
    text of each row in the file, in the order they stand there: (key, text)."""

    text: str
    parts: dict[str, str] = field(default_factory=dict)
    placed: list[str] = field(default_factory=list)
    order: list[tuple[str, str]] = field(default_factory=list)
    # The heading level of each block Canon added to a log, and each row's place in a file that lists
    # rows oldest first with its level (`pieces.record`).
    levels: dict[str, int] = field(default_factory=dict)
    marks: dict[str, tuple[str, str]] = field(default_factory=dict)
    # The pieces' lines of the file, when its rendering knew them (`ledger.mirror.splice`).
    lines: str | None = None


def _joined(before: str, addition: str) -> str:
    """`addition` after `before`, with one blank line between them (nothing of `before` changed)."""
    if not before:
        return addition
    if not before.endswith("\n"):
        before += "\n"
    if not before.endswith("\n\n"):
        before += "\n"
    return before + addition


# ---------------------------------------------------------------------------------------------
# decisions.md


def _block_status(markdown: str) -> str:
    parts = [p for p in squad.parse_decisions(markdown) if isinstance(p, squad.Block)]
    return parts[0].status if parts else DecisionStatus.ACTIVE


def _replacement_title(decision: Decision, by_id: Mapping[int, Decision]) -> str:
    replacement = by_id.get(decision.superseded_by_id or 0)
    return " ".join(replacement.title.split()) if replacement else f"decision {decision.superseded_by_id}"


def _adopted_note(decision: Decision, by_id: Mapping[int, Decision]) -> str:
    """The line under an adopted block when the ledger changed its status since the team wrote it."""
    if decision.status == _block_status(decision.markdown):
        return ""
    if decision.status == DecisionStatus.SUPERSEDED and decision.superseded_by_id:
        return f"**Canon — Superseded by:** {_replacement_title(decision, by_id)}"
    if decision.status == DecisionStatus.ARCHIVED:
        return "**Canon — Archived.**"
    return ""


def decision_text(decision: Decision, by_id: Mapping[int, Decision]) -> str:
    """One decision's block: the team's text when the ledger holds it (an adopted block, or a team's inbox
    file merged as it was written), with a line when the ledger changed its status; Canon's own in
    Squad's style, its heading made unique by the decision's id (Squad's Scribe keeps only the first of
    blocks that share a heading)."""
    if decision.markdown:
        note = _adopted_note(decision, by_id)
        return decision.markdown.rstrip("\r\n") + "\n" + note + "\n" if note else decision.markdown
    body = decision.content.strip()
    if decision.rationale.strip():
        body += f"\n\n**Why:** {decision.rationale.strip()}"
    superseded = decision.status == DecisionStatus.SUPERSEDED and decision.superseded_by_id
    return squad.render_block(
        date=decision.created_at,
        title=decision.title,
        author=decision.agent.name,
        body=body,
        type=decision.type,
        status=decision.status.capitalize(),
        note=f"**Superseded by:** {_replacement_title(decision, by_id)}" if superseded else "",
        ref=decision.pk,
    )


_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\r?\n)+")


def inbox_block(text: str) -> str | None:
    """A team's inbox file as Squad's Scribe appends it to the log: its text without a byte-order mark,
    leading blank lines and trailing white space, ending with one newline. None when that does not read
    back as exactly one decision block (front matter, no heading a block starts at, several blocks)."""
    candidate = _LEADING_BLANK_LINES.sub("", text.removeprefix("\ufeff")).rstrip() + "\n"
    parts = squad.parse_decisions(candidate)
    if len(parts) == 1 and isinstance(parts[0], squad.Block) and parts[0].text == candidate:
        return candidate
    return None


def level(row: Row, text: str) -> int:
    """The heading level of the block `text` starts with: Canon's own blocks (`squad.render_block`) are
    `###`; a block the team wrote is read."""
    if not has_markdown(row):
        return NEW_BLOCK_LEVEL
    block = next((p for p in squad.parse_decisions(text) if isinstance(p, squad.Block)), None)
    return block.level if block is not None else NEW_BLOCK_LEVEL


def needs_rule(levels: Sequence[int]) -> bool:
    """Whether, of blocks at these heading levels one after the other, one would read as part of the one
    before it (a deeper heading continues a block): then a `---` line must end each of them."""
    if len(set(levels)) < 2:
        return False
    return any(after > before for before, after in pairwise(levels))


def render_decisions(
    decisions: Sequence[Row],
    *,
    path: str,
    base: str | None,
    known: dict[str, str],
    placed: Iterable[str],
    text: Callable[[Any], str] | None = None,
    digest: Callable[[str, str], str] | None = None,
) -> Rendered:
    """The decision log at `path`. `base` is the adopted file as it stands (None: Canon's own file).
    `text` gives a decision's block (`decision_text` of the models by default), `digest` the sha256 of
    a row's text (by its key) when it is known already.

    A decision adopted from another file (its `origin`, an archive say) is never added here; blocks the
    file holds already are rendered wherever they stand.
    """
    if text is None:
        by_id: dict[int, Any] = {d.pk: d for d in decisions}
        text = lambda d: decision_text(d, by_id)  # noqa: E731
    digest = digest or _digest
    keys = [key(d) for d in decisions]
    by_key = dict(zip(keys, decisions, strict=True))
    ever = set(placed) if base is not None else set()
    parts = squad.parse_decisions(base if base is not None else DECISIONS_PREAMBLE)
    out = Rendered(text="")
    texts: list[str] = []
    first_block = next((i for i, p in enumerate(parts) if isinstance(p, squad.Block)), len(parts))
    newest_first = squad.newest_first(parts)
    separators = squad.uses_separators(parts)
    held: list[tuple[str, str]] = []
    for part in parts:
        row = by_key.get(known.get(sha(part.text), "")) if isinstance(part, squad.Block) else None
        if row is None:
            texts.append(part.text)
            continue
        name = key(row)
        written = as_written(part.text, text(row))
        texts.append(written)
        out.parts[digest(name, written)] = name
        held.append((name, written))
        ever.add(name)
    added: list[tuple[str, str]] = []
    levels: list[int] = []
    for name, decision in zip(keys, decisions, strict=True):
        if name in ever or decision.origin not in ("", path):
            continue
        block = text(decision)
        out.parts[digest(name, block)] = name
        added.append((name, block))
        levels.append(level(decision, block))
        out.levels[name] = levels[-1]
    ever.update(name for name, _ in added)
    blocks = [b for _, b in added]
    out.order = held + added
    if blocks and newest_first and first_block < len(parts):
        # Before the newest adopted block, newest first, each followed by what separates the team's blocks.
        first = parts[first_block]
        assert isinstance(first, squad.Block)
        rule = separators or needs_rule([*reversed(levels), first.level])
        glue = "\n---\n\n" if rule else "\n"
        head, tail = "".join(texts[:first_block]), "".join(texts[first_block:])
        texts = [_joined(head, "".join(b + glue for b in reversed(blocks))) + tail]
        out.order = added[::-1] + held
    elif blocks:
        last = next((p for p in reversed(parts) if isinstance(p, squad.Block)), None)
        rule = separators or needs_rule([*([last.level] if last is not None else []), *levels])
        glue = "\n---\n\n" if rule else "\n"
        addition = glue.join(blocks)
        if rule and last is not None:
            addition = "---\n\n" + addition
        texts = [_joined("".join(texts), addition)]
    out.text = "".join(texts)
    out.placed = sorted(ever)
    return out


# ---------------------------------------------------------------------------------------------
# agents/{folder}/history.md


def memory_text(memory: AgentMemory) -> str:
    if memory.source == Source.IMPORT and memory.markdown:
        return memory.markdown
    return squad.render_entry(type=memory.type, content=memory.content, date=memory.created_at)


def shown(memory: Any) -> bool:
    """Canon's own memories leave the file when archived; a line the team wrote never does."""
    return memory.status == MemoryStatus.ACTIVE or (memory.source == Source.IMPORT and has_markdown(memory))


def render_history(
    agent: Agent,
    memories: Sequence[Row],
    *,
    base: str | None,
    known: dict[str, str],
    placed: Iterable[str],
    text: Callable[[Any], str] = memory_text,
    digest: Callable[[str, str], str] | None = None,
) -> Rendered:
    """The history at an agent's folder. `base` is the adopted file as it stands (None: Canon's own);
    `text` gives a memory's entry (`memory_text` of the model by default), `digest` the sha256 of an
    entry (by its key) when it is known already."""
    digest = digest or _digest
    by_key = {key(m): m for m in memories}
    ever = set(placed) if base is not None else set()
    parts = squad.parse_history(base if base is not None else f"# {' '.join(agent.name.split())}\n")
    out = Rendered(text="")
    texts: list[str] = []
    # The row each of `texts` holds (key, text), if any.
    rows: list[tuple[str, str] | None] = []
    # The index in `texts` after which each section's new entries go: its last entry, else its heading.
    section_end: dict[str, int] = {}
    for part in parts:
        row = by_key.get(known.get(sha(part.text), "")) if isinstance(part, squad.Entry) else None
        if row is not None:
            ever.add(key(row))
            if not shown(row):
                continue
            written = as_written(part.text, text(row))
            out.parts[digest(key(row), written)] = key(row)
            texts.append(written)
            rows.append((key(row), written))
        else:
            texts.append(part.text)
            rows.append(None)
        folded = part.section.casefold()
        if isinstance(part, squad.Entry) or folded not in section_end:
            section_end[folded] = len(texts) - 1
    additions: dict[int, list[tuple[str, str]]] = {}
    new_sections: dict[str, list[tuple[str, str]]] = {}
    for memory in memories:
        if key(memory) in ever or memory.status != MemoryStatus.ACTIVE:
            continue
        ever.add(key(memory))
        entry = text(memory)
        out.parts[digest(key(memory), entry)] = key(memory)
        section = squad.SECTION_FOR_TYPE.get(memory.type, "Learnings")
        index = section_end.get(section.casefold())
        if index is None:
            new_sections.setdefault(section, []).append((key(memory), entry))
        else:
            additions.setdefault(index, []).append((key(memory), entry))
    for index, row_at in enumerate(rows):
        out.order += [row_at] if row_at is not None else []
        out.order += additions.get(index, [])
    for index in sorted(additions, reverse=True):
        texts[index] = _joined(texts[index], "\n".join(t for _, t in additions[index]))
    whole = "".join(texts)
    for section in sorted(new_sections, key=_section_order):
        whole = _joined(whole, f"## {section}\n\n" + "\n".join(t for _, t in new_sections[section]))
        out.order += new_sections[section]
    out.text = whole
    out.placed = sorted(ever)
    return out


def _section_order(section: str) -> int:
    order = [squad.SECTION_FOR_TYPE[t] for t in ("core_context", "learning", "pattern", "update")]
    return order.index(section) if section in order else len(order)


def history_homes(agents: Sequence[Agent], folders: dict[int, list[str]]) -> dict[int, str]:
    """Each agent's home under `agents/`: the one folder whose history gets the memories no file gave
    the agent (Canon's own). `folders` holds the folders each agent already has, the ones adopted first,
    the first adopted first: the one named exactly as the agent is its home, else the first. An agent
    with none gets its name's segment, with `-{id}` after it when another folder has that name in any
    case (`Rai` and `rai` are one folder where the file system ignores case)."""
    homes: dict[int, str] = {}
    used = {folder.casefold() for names in folders.values() for folder in names}
    for agent in sorted(agents, key=lambda a: a.pk):
        names = folders.get(agent.pk, [])
        if names:
            homes[agent.pk] = agent.name if agent.name in names else names[0]
            continue
        folder = agent_segment(agent.name)
        if folder.casefold() in used:
            folder = f"{folder}-{agent.pk}"
        homes[agent.pk] = folder
        used.add(folder.casefold())
    return homes


# ---------------------------------------------------------------------------------------------
# identity/now.md, the inbox, .agentweaver


def render_now(session: Session, *, base: str | None) -> str:
    """The open session's focus in the front matter; the body the team wrote is kept as it is."""
    meta: dict[str, Any] = {}
    body = None
    if base is not None:
        split = squad.split_front_matter(base)
        if split is not None:
            front, body = split
            try:
                meta = squad.load_yaml(front.strip().strip("-"))
            except squad.FrontMatterError:
                meta = {}
        else:
            body = base
    values = {"focus_area": session.focus_area, "active_issues": list(session.active_issues)}
    if base is not None and body is not None and all(meta.get(k) == v for k, v in values.items()):
        return base
    # `updated_at` first, then the team's own keys in their order, then the focus and issues.
    meta = {"updated_at": None, **meta, **values}
    meta["updated_at"] = session.updated_at.isoformat()
    if body is None:
        body = f"\n# What We're Focused On\n\n{session.focus_area.strip()}\n"
        if session.summary.strip():
            body += f"\n## Summary\n\n{session.summary.strip()}\n"
    return squad.render_now(meta=meta, body=body)


def render_inbox_file(entry: InboxEntry) -> str:
    """A pending entry's own inbox file, in the shape Squad's `squad_decide` writes (no front matter), so
    that Squad's `nap`, which appends inbox files to the log as they are, appends a decision block."""
    return squad.render_proposal(
        date=entry.created_at,
        title=entry.title,
        author=entry.agent.name,
        content=entry.content,
        rationale=entry.rationale,
        type=entry.type,
        importance=entry.importance,
        tags=list(entry.tags),
        run_id=entry.run_id,
    )


def boundary_text(decision: Decision) -> str:
    """One boundary in `.agentweaver/context/boundaries.md`: its values shaped like the compiler's."""
    lines = [
        f"## {one_line(decision.title)}",
        f"**Type:** {decision.type} | **By:** {one_line(decision.agent.name)}"
        f" | **Status:** {decision.status}",
        "",
        block(decision.content.strip()),
    ]
    rationale = block(decision.rationale.strip())
    if rationale:
        lines += ["", f"> **Rationale:** {rationale}"]
    lines += ["", "---", ""]
    return "\n".join(lines)


def is_boundary(decision: Any) -> bool:
    """Whether the decision is in `boundaries.md`: active, of a boundary type, not held for review."""
    return bool(
        decision.status == DecisionStatus.ACTIVE and decision.type in BOUNDARY_TYPES and not decision.held
    )


def boundaries(decisions: Sequence[Row], text: Callable[[Any], str] = boundary_text) -> Rendered:
    shown = [(key(d), text(d)) for d in decisions if is_boundary(d)]
    return Rendered(text="\n".join(["# Boundaries\n", *[t for _, t in shown]]), order=shown)


def render_boundaries(decisions: Sequence[Decision]) -> str:
    return boundaries(decisions).text


def pattern_text(memory: AgentMemory) -> str:
    """One pattern in `.agentweaver/context/patterns.md`."""
    heading = f"### {one_line(memory.agent.name)} {memory.created_at:%Y-%m-%d}"
    return f"{heading}\n{block(memory.content.strip())}\n"


def is_pattern(memory: Any) -> bool:
    return bool(memory.type == MemoryType.PATTERN and memory.status == MemoryStatus.ACTIVE)


def patterns(memories: Sequence[Row], text: Callable[[Any], str] = pattern_text) -> Rendered:
    """`.agentweaver/context/patterns.md` of the memories the files show (never a notes file's)."""
    shown = [(key(m), text(m)) for m in memories if is_pattern(m)]
    return Rendered(text="\n".join(["# Patterns\n", *[t for _, t in shown]]), order=shown)


def render_patterns(memories: Sequence[AgentMemory]) -> str:
    return patterns(memories).text
