"""The file mirror (SPEC §5): the ledger exported as markdown into a project's workspace, and
hand-written proposals in `.squad/decisions/inbox/` imported back.

The database is the truth. Export renders every file in memory, then writes only those whose bytes
changed, each atomically (a temporary file in the same folder, then a rename), and removes the files
it wrote earlier whose source is gone. It remembers what it wrote in `.squad/.canon-manifest.json`
(path → sha256): an inbox file it did not write, or that someone edited since, is a person's
proposal, so it is never overwritten or removed (import it first: `sync_ledger`).

Paths are built from slugs and agent segments only (`[a-z0-9-]`), and every folder on the way is
checked with `lstat`: a symbolic link where a folder or file should be is refused for that path,
with an error in the report, while the rest of the export goes on.

Exports of one project never interleave: each takes an exclusive `flock` on a per-project lock file
(`CANON_LOCK_DIR`), which holds across processes whatever the database.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import frontmatter
import yaml
from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from ledger.models import (
    BOUNDARY_TYPES,
    AgentMemory,
    Decision,
    DecisionStatus,
    EntryStatus,
    EntryType,
    InboxEntry,
    MemoryStatus,
    MemoryType,
    MirrorKind,
    MirrorRun,
    Project,
    Session,
)
from ledger.values import agent_segment

logger = logging.getLogger("canon.mirror")

INBOX_DIR = ".squad/decisions/inbox"
MANIFEST = ".squad/.canon-manifest.json"
MAX_IMPORT_BYTES = 256 * 1024
REQUIRED_KEYS = ("agent", "slug", "type", "title")


class MirrorError(Exception):
    """The workspace as a whole cannot be used (missing, not a folder, not writable)."""


# ---------------------------------------------------------------------------------------------
# Rendering: the ledger as files, byte for byte the same for the same ledger


def _yaml(data: dict[str, Any]) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False, width=10_000)


def _decision_section(decision: Decision, replacement: Decision | None) -> str:
    lines = [
        f"## {decision.title}",
        f"**Type:** {decision.type} | **By:** {decision.agent.name} | **Status:** {decision.status}",
    ]
    if replacement is not None:
        lines.append(f"**Superseded by:** {replacement.title}")
    lines += ["", decision.content.strip()]
    if decision.rationale:
        lines += ["", f"> **Rationale:** {decision.rationale.strip()}"]
    lines += ["", "---", ""]
    return "\n".join(lines)


def render_inbox_file(entry: InboxEntry) -> str:
    meta: dict[str, Any] = {
        "agent": entry.agent.name,
        "slug": entry.slug,
        "type": entry.type,
        "title": entry.title,
        "importance": entry.importance,
    }
    if entry.tags:
        meta["tags"] = list(entry.tags)
    if entry.run_id:
        meta["run_id"] = entry.run_id
    body = entry.content.strip()
    if entry.rationale.strip():
        body += f"\n\n**Rationale:** {entry.rationale.strip()}"
    return f"---\n{_yaml(meta)}---\n\n{body}\n"


def render_files(project: Project) -> dict[str, str]:
    """Every file of the mirror, relative path → text, for the ledger as it is now."""
    files: dict[str, str] = {}
    decisions = list(
        Decision.objects.filter(project=project).select_related("agent").order_by("created_at", "id")
    )
    by_id = {d.pk: d for d in decisions}
    active = [d for d in decisions if d.status == DecisionStatus.ACTIVE]
    inactive = [d for d in decisions if d.status != DecisionStatus.ACTIVE]
    parts = ["# Team Decisions\n"]
    parts += [_decision_section(d, None) for d in active]
    parts += [_decision_section(d, by_id.get(d.superseded_by_id or 0)) for d in inactive]
    files[".squad/decisions.md"] = "\n".join(parts)

    boundaries = [d for d in active if d.type in BOUNDARY_TYPES]
    files[".agentweaver/context/boundaries.md"] = "\n".join(
        ["# Boundaries\n", *[_decision_section(d, None) for d in boundaries]]
    )

    for entry in (
        InboxEntry.objects.filter(project=project, status=EntryStatus.PENDING)
        .select_related("agent")
        .order_by("slug")
    ):
        files[f"{INBOX_DIR}/{entry.slug}.md"] = render_inbox_file(entry)

    memories = (
        AgentMemory.objects.filter(
            project=project,
            status=MemoryStatus.ACTIVE,
            type__in=[MemoryType.LEARNING, MemoryType.UPDATE, MemoryType.PATTERN],
        )
        .select_related("agent")
        .order_by("created_at", "id")
    )
    histories: dict[str, list[str]] = {}
    names: dict[str, str] = {}
    patterns = ["# Patterns\n"]
    for memory in memories:
        if memory.type == MemoryType.PATTERN:
            patterns.append(
                f"### {memory.agent.name} {memory.created_at:%Y-%m-%d}\n{memory.content.strip()}\n"
            )
            continue
        segment = agent_segment(memory.agent.name)
        names.setdefault(segment, memory.agent.name)
        histories.setdefault(segment, []).append(
            f"### [{memory.type}] {memory.created_at:%Y-%m-%d}\n{memory.content.strip()}\n"
        )
    for segment, items in sorted(histories.items()):
        files[f".squad/agents/{segment}/history.md"] = "\n".join([f"# {names[segment]} History\n", *items])
    files[".agentweaver/context/patterns.md"] = "\n".join(patterns)

    session = Session.objects.filter(project=project, ended_at__isnull=True).first()
    if session is not None:
        meta = {
            "updated_at": session.updated_at.isoformat(),
            "focus_area": session.focus_area,
            "active_issues": list(session.active_issues),
        }
        files[".squad/identity/now.md"] = (
            f"---\n{_yaml(meta)}---\n\n# What We're Focused On\n\n{session.focus_area.strip()}\n\n"
            f"## Summary\n\n{session.summary.strip()}\n"
        )
    return files


# ---------------------------------------------------------------------------------------------
# Safe file system access inside the workspace


def _workspace(project: Project) -> Path:
    if not project.workspace:
        raise MirrorError(f"project {project.slug} has no workspace directory")
    root = Path(project.workspace)
    if not root.is_absolute():
        raise MirrorError(f"workspace {project.workspace!r} must be an absolute path")
    if not root.is_dir():
        raise MirrorError(f"workspace {project.workspace} does not exist or is not a directory")
    if not os.access(root, os.W_OK | os.X_OK):
        raise MirrorError(f"workspace {project.workspace} is not writable")
    return root


class UnsafePath(Exception):
    pass


def _safe_target(root: Path, relative: str, *, create_dirs: bool, folder_only: bool = False) -> Path:
    """The path inside `root`, refusing `..`, absolute parts and symbolic links on the way.

    With `folder_only`, `relative` ends in `/.` and the folder itself is returned once checked.
    """
    parts = Path(relative).parts
    if folder_only:
        parts = (*parts, ".")
    if not parts or Path(relative).is_absolute() or any(p in ("..", ".", "") for p in parts[:-1]):
        raise UnsafePath(f"{relative}: not a path inside the workspace")
    if parts[-1] in ("..", ""):
        raise UnsafePath(f"{relative}: not a path inside the workspace")
    current = root
    for part in parts[:-1]:
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            if not create_dirs:
                return root.joinpath(*parts)
            os.mkdir(current)
            continue
        if stat.S_ISLNK(info.st_mode):
            raise UnsafePath(f"{relative}: {current.relative_to(root)} is a symbolic link")
        if not stat.S_ISDIR(info.st_mode):
            raise UnsafePath(f"{relative}: {current.relative_to(root)} is not a directory")
    if folder_only:
        return current
    if parts[-1] == ".":
        raise UnsafePath(f"{relative}: not a path inside the workspace")
    target = root.joinpath(*parts)
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return target
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePath(f"{relative}: is a symbolic link")
    if not stat.S_ISREG(info.st_mode):
        raise UnsafePath(f"{relative}: is not a regular file")
    return target


def _read_bytes(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_atomic(path: Path, data: bytes) -> None:
    """Write a temporary file beside `path`, flush it to disk, then rename it over `path`."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(temp)
        raise


@contextmanager
def project_lock(project: Project) -> Iterator[None]:
    """An exclusive lock on this project's mirror, held across threads and processes."""
    folder = Path(settings.CANON_LOCK_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"mirror-{project.pk}.lock", "w") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


# ---------------------------------------------------------------------------------------------
# Export


@dataclass
class ExportReport:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kept: list[tuple[str, str]] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    dry_run: bool = False

    @property
    def ok(self) -> bool:
        return not self.errors

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "dry_run": self.dry_run,
            "written": self.written,
            "unchanged": len(self.unchanged),
            "removed": self.removed,
            "kept": [{"path": p, "reason": r} for p, r in self.kept],
            "errors": [{"path": p, "error": e} for p, e in self.errors],
        }

    def summary(self) -> str:
        return (
            f"{len(self.written)} written, {len(self.unchanged)} unchanged, {len(self.removed)} removed, "
            f"{len(self.kept)} kept, {len(self.errors)} errors"
        )


def _load_manifest(root: Path) -> dict[str, str]:
    try:
        data = _read_bytes(_safe_target(root, MANIFEST, create_dirs=False))
        loaded = json.loads(data) if data else {}
    except (UnsafePath, ValueError, OSError):
        return {}
    return {str(k): str(v) for k, v in loaded.items()} if isinstance(loaded, dict) else {}


def export_project(
    project: Project, *, dry_run: bool = False, progress: Callable[[str], None] | None = None
) -> ExportReport:
    """Bring the workspace's files in line with the ledger. MirrorError if the workspace is unusable."""
    root = _workspace(project)
    report = ExportReport(dry_run=dry_run)
    with project_lock(project):
        files = render_files(project)
        manifest = _load_manifest(root)
        new_manifest: dict[str, str] = {}
        for relative, text in sorted(files.items()):
            if progress:
                progress(relative)
            data = text.encode("utf-8")
            try:
                target = _safe_target(root, relative, create_dirs=not dry_run)
                current = _read_bytes(target)
            except (UnsafePath, OSError) as exc:
                report.errors.append((relative, str(exc)))
                continue
            if current == data:
                report.unchanged.append(relative)
                new_manifest[relative] = _sha(data)
                continue
            if (
                current is not None
                and relative.startswith(INBOX_DIR)
                and manifest.get(relative) != _sha(current)
            ):
                # A person's file (never written by us, or edited since): not ours to overwrite.
                report.kept.append((relative, "written by hand; import it (sync_ledger) or remove it"))
                continue
            if not dry_run:
                try:
                    write_atomic(target, data)
                except OSError as exc:
                    report.errors.append((relative, f"could not write: {exc.strerror or exc}"))
                    continue
            report.written.append(relative)
            new_manifest[relative] = _sha(data)
        for relative in sorted(set(manifest) - set(files)):
            try:
                target = _safe_target(root, relative, create_dirs=False)
                current = _read_bytes(target)
            except (UnsafePath, OSError) as exc:
                report.errors.append((relative, str(exc)))
                continue
            if current is None:
                continue
            if _sha(current) != manifest[relative]:
                report.kept.append((relative, "edited by hand since it was exported; left in place"))
                continue
            if not dry_run:
                os.unlink(target)
            report.removed.append(relative)
        if not dry_run:
            # Keep entries whose write failed this time, so their files are still recognised as ours.
            for relative, _error in report.errors:
                if relative in manifest and relative in files:
                    new_manifest[relative] = manifest[relative]
            data = json.dumps(new_manifest, indent=1, sort_keys=True).encode("utf-8") + b"\n"
            try:
                target = _safe_target(root, MANIFEST, create_dirs=True)
                if _read_bytes(target) != data:
                    write_atomic(target, data)
            except (UnsafePath, OSError) as exc:
                report.errors.append((MANIFEST, str(exc)))
    return report


# ---------------------------------------------------------------------------------------------
# Import


@dataclass
class ImportReport:
    created: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    conflicts: list[tuple[str, str]] = field(default_factory=list)
    dry_run: bool = False

    @property
    def ok(self) -> bool:
        return True  # skipped files and conflicts are warnings, not failures

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "dry_run": self.dry_run,
            "created": self.created,
            "unchanged": len(self.unchanged),
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "conflicts": [{"path": p, "reason": r} for p, r in self.conflicts],
        }

    def summary(self) -> str:
        return (
            f"{len(self.created)} created, {len(self.unchanged)} unchanged, {len(self.skipped)} skipped, "
            f"{len(self.conflicts)} conflicts"
        )


@dataclass
class Proposal:
    agent: str
    slug: str
    type: str
    title: str
    content: str
    rationale: str
    tags: Any
    importance: str | None
    run_id: str


def parse_proposal(data: bytes) -> Proposal:
    """One inbox file, or ValueError with the reason it cannot be imported."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError("not UTF-8") from exc
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").lstrip("\n")
    if not text.startswith("---"):
        raise ValueError("no front matter")
    try:
        post = frontmatter.loads(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"front matter is not valid YAML ({type(exc).__name__})") from exc
    meta = post.metadata
    if not isinstance(meta, dict) or not meta:
        raise ValueError("no front matter")
    for key in REQUIRED_KEYS:
        value = meta.get(key)
        if value is None or (isinstance(value, str) and not value.strip()):
            raise ValueError(f"missing key: {key}")
    if not isinstance(meta["type"], str) or meta["type"] not in EntryType.values:
        raise ValueError(f"bad type: {meta['type']!r}")
    if not isinstance(meta["agent"], str) or not isinstance(meta["slug"], str):
        raise ValueError("agent and slug must be text")
    body = post.content
    content, marker, rationale = body.partition("**Rationale:**")
    content, rationale = content.strip(), rationale.strip() if marker else ""
    if not content:
        raise ValueError("no content after the front matter")
    importance = meta.get("importance")
    run_id = meta.get("run_id", "")
    return Proposal(
        agent=meta["agent"],
        slug=meta["slug"],
        type=meta["type"],
        title=str(meta["title"]).strip(),
        content=content,
        rationale=rationale,
        tags=meta.get("tags"),
        importance=importance if isinstance(importance, str) else None,
        run_id=str(run_id) if run_id is not None else "",
    )


def _same_text(entry: InboxEntry, proposal: Proposal) -> bool:
    from ledger.values import agent_key

    return (
        entry.agent.key == agent_key(proposal.agent)
        and entry.type == proposal.type
        and entry.title.strip() == proposal.title
        and entry.content.strip() == proposal.content
        and entry.rationale.strip() == proposal.rationale
    )


def import_project(
    project: Project, *, dry_run: bool = False, progress: Callable[[str], None] | None = None
) -> ImportReport:
    """Create a pending entry for each inbox file whose slug the project has never had (union semantics)."""
    from ledger import services
    from ledger.values import InvalidValue, require_slug

    root = _workspace(project)
    report = ImportReport(dry_run=dry_run)
    try:
        # Check the folders on the way as for a file inside the inbox (the name itself is not looked at).
        inbox = _safe_target(root, f"{INBOX_DIR}/.", create_dirs=False, folder_only=True)
    except UnsafePath as exc:
        report.skipped.append((INBOX_DIR, str(exc)))
        return report
    if not inbox.is_dir():
        return report
    claimed: dict[str, str] = {}
    parsed: list[tuple[str, str, Proposal]] = []
    for path in sorted(inbox.glob("*.md")):
        relative = str(path.relative_to(root))
        if progress:
            progress(relative)
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            report.skipped.append((relative, "a symbolic link"))
            continue
        if not stat.S_ISREG(info.st_mode):
            report.skipped.append((relative, "not a regular file"))
            continue
        if info.st_size > MAX_IMPORT_BYTES:
            report.skipped.append((relative, f"too large ({info.st_size} bytes; at most {MAX_IMPORT_BYTES})"))
            continue
        if info.st_size == 0:
            report.skipped.append((relative, "empty file"))
            continue
        try:
            proposal = parse_proposal(_read_bytes(path) or b"")
            slug = require_slug(proposal.slug)
        except (ValueError, OSError) as exc:
            report.skipped.append(
                (relative, str(exc) if not isinstance(exc, InvalidValue) else f"bad slug: {exc}")
            )
            continue
        parsed.append((relative, slug, proposal))
    existing_by_slug: dict[str, InboxEntry] = {}
    slugs = [slug for _, slug, _ in parsed]
    for start in range(0, len(slugs), 500):
        for entry in InboxEntry.objects.select_related("agent").filter(
            project=project, slug__in=slugs[start : start + 500]
        ):
            existing_by_slug[entry.slug] = entry
    for relative, slug, proposal in parsed:
        if slug in claimed:
            report.conflicts.append((relative, f"slug {slug!r} is also claimed by {claimed[slug]}"))
            continue
        claimed[slug] = relative
        existing = existing_by_slug.get(slug)
        if existing is not None:
            if _same_text(existing, proposal):
                report.unchanged.append(relative)
            else:
                report.conflicts.append(
                    (relative, f"the ledger already has {slug!r} ({existing.status}) with other text")
                )
            continue
        if dry_run:
            report.created.append(slug)
            continue
        try:
            entry = services.entry_import(
                project=project,
                agent_name=proposal.agent,
                slug=slug,
                type=proposal.type,
                title=proposal.title,
                content=proposal.content,
                rationale=proposal.rationale,
                tags=proposal.tags,
                importance=proposal.importance,
                run_id=proposal.run_id,
            )
        except services.Conflict as exc:
            report.conflicts.append((relative, exc.message))
            continue
        except services.LedgerError as exc:
            report.skipped.append((relative, exc.message))
            continue
        report.created.append(entry.slug)
    return report


# ---------------------------------------------------------------------------------------------
# Recorded runs, and the best-effort export after ledger writes


@dataclass
class MirrorResult:
    """What an import or export did: its report, or the error that stopped it, and the stored run."""

    kind: str
    report: ExportReport | ImportReport | None
    error: str = ""
    run: MirrorRun | None = None

    @property
    def ok(self) -> bool:
        return self.report is not None and self.report.ok

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = self.report.as_dict() if self.report is not None else {"ok": False}
        if self.error:
            body["error"] = self.error
        return body

    def summary(self) -> str:
        return f"{self.kind}: {self.report.summary() if self.report is not None else 'failed: ' + self.error}"


def run_and_record(
    project: Project,
    kind: str,
    *,
    trigger: str,
    actor: str = "",
    dry_run: bool = False,
    progress: Callable[[str], None] | None = None,
) -> MirrorResult:
    """Import or export, its result stored as a MirrorRun (not for dry runs). Never raises MirrorError."""
    action = export_project if kind == MirrorKind.EXPORT else import_project
    result = MirrorResult(kind=kind, report=None)
    try:
        result.report = action(project, dry_run=dry_run, progress=progress)
    except MirrorError as exc:
        result.error = str(exc)
    except OSError as exc:
        result.error = f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc)
    if dry_run:
        return result
    if kind == MirrorKind.EXPORT:
        _remember_export(project, result.ok, result.error or result.summary())
    details = result.as_dict()
    warnings = [
        *details.get("skipped", []),
        *details.get("conflicts", []),
        *details.get("kept", []),
        *details.get("errors", []),
    ]
    counts = {
        key: len(value) if isinstance(value, list) else value
        for key, value in details.items()
        if key not in ("ok", "dry_run", "error")
    }
    result.run = MirrorRun.objects.create(
        project=project,
        kind=kind,
        trigger=trigger,
        ok=result.ok,
        counts=counts,
        warnings=warnings,
        error=result.error,
        actor=actor[:150],
    )
    return result


def _remember_export(project: Project, ok: bool, message: str) -> None:
    now = timezone.now()
    if ok:
        Project.objects.filter(pk=project.pk).update(exported_at=now, export_error="", export_error_at=None)
    else:
        Project.objects.filter(pk=project.pk).update(export_error=message[:10_000], export_error_at=now)


_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="canon-export")
_queued: set[int] = set()
_futures: list[Future[None]] = []
_queue_lock = threading.Lock()


def export_soon(project_id: int) -> None:
    """Export a project in the background after a write. Repeated requests while one waits coalesce."""
    with _queue_lock:
        if project_id in _queued:
            return
        _queued.add(project_id)
        _futures.append(_executor.submit(_background_export, project_id))


def _background_export(project_id: int) -> None:
    with _queue_lock:
        _queued.discard(project_id)
    try:
        close_old_connections()
        project = Project.objects.filter(pk=project_id).first()
        if project is None or not project.workspace:
            return
        result = run_and_record(project, MirrorKind.EXPORT, trigger="background")
        if not result.ok:
            logger.warning(
                "background export of %s failed: %s", project.slug, result.error or result.summary()
            )
    except Exception:
        logger.exception("background export of project %s failed", project_id)
    finally:
        from django.db import connection

        connection.close()


def wait_for_background_exports(timeout: float = 30) -> None:
    """Block until every queued background export has finished (for tests and commands)."""
    while True:
        with _queue_lock:
            pending = [f for f in _futures if not f.done()]
            _futures[:] = pending
        if not pending:
            return
        for future in pending:
            future.result(timeout=timeout)


def sync_project(
    project: Project,
    *,
    trigger: str,
    actor: str = "",
    dry_run: bool = False,
    progress: Callable[[str], None] | None = None,
) -> list[MirrorResult]:
    """Import, then export: the cron job. Import comes first so no hand-written proposal is lost."""
    imported = run_and_record(
        project, MirrorKind.IMPORT, trigger=trigger, actor=actor, dry_run=dry_run, progress=progress
    )
    exported = run_and_record(
        project, MirrorKind.EXPORT, trigger=trigger, actor=actor, dry_run=dry_run, progress=progress
    )
    return [imported, exported]
