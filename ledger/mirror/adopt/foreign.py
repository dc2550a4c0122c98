"""A file in the workspace that may be someone else's: read only when it changed since Canon last wrote
or adopted it, and only when it is safe to read; and what Canon remembers of a file once it adopted it."""

from __future__ import annotations

from django.utils import timezone

from ledger.mirror import chunks, fs, squad
from ledger.mirror.render import sha
from ledger.mirror.reports import ImportReport
from ledger.models import MirrorFile

MAX_IMPORT_BYTES = 256 * 1024
# A team's whole decision log or an agent's history (the largest seen are ~130 KB).
MAX_ADOPT_BYTES = 8 * 1024 * 1024


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
    return f"dropped {counted(len(found), 'control character')}: {shown}{more}"


def counted(n: int, one: str, many: str = "") -> str:
    """`n` things as a report says them: "1 decision", "2 decisions", "2 memories" (`many`)."""
    return f"{n} {one if n == 1 else many or one + 's'}"


def remember(row: MirrorFile, *, digest: str, parts: dict[str, str], placed: set[str]) -> None:
    """Record on the file's manifest row that Canon adopted it as it is now (`digest`): the rows its parts
    became (sha256 of a part -> the row's key), and the keys now placed in it."""
    row.adopted_sha256 = digest
    row.adopted_at = row.adopted_at or timezone.now()
    row.parts = parts
    row.placed = sorted(set(row.placed) | placed)
    chunks.save(row)
