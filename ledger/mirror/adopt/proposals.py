"""An inbox file read as a proposal, whatever its shape: Canon's own, Squad's and people's without front
matter, `squad memory write` files, and front matter as older releases of Canon wrote it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ledger import services
from ledger.mirror import squad
from ledger.models import EntryType, Project


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


def parse_front_matter_proposal(meta: dict[str, Any], body: str) -> Proposal:
    """An inbox file with front matter (`meta`, read: `agent`, `slug`, `type`, `title`; `body` split at
    the first `**Rationale:**`), or ValueError with the reason it cannot be imported."""
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
        proposal = parse_front_matter_proposal(meta, split[1])
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
