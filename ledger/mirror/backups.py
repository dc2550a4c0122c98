"""The copies Canon keeps, in its own data directory, of the team's bytes before it replaces them."""

from __future__ import annotations

import contextlib
import os
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings

from ledger.mirror.fs import UnsafePath, path_parts, write_all


def backup(data: bytes, *, project_slug: str, relative: str, when: datetime) -> Path:
    """Write a copy of `data` under `CANON_DATA_DIR/backups/<project_slug>/<when>/<relative>` and
    return its path.

    `when` is written as `%Y%m%dT%H%M%S%fZ` (an aware time is converted to UTC first). Folders are
    created; an existing copy is never overwritten: the file is created with O_EXCL, and when the name
    is taken a counter is added before the extension (`notes.1.md`, `notes.2.md`, ...). Raises
    UnsafePath for a slug or a relative path with `..`, `.`, empty parts, or an absolute path.
    """
    slug_parts = path_parts(project_slug)
    if len(slug_parts) != 1:
        raise UnsafePath(f"project slug refused: {project_slug!r}")
    parts = path_parts(relative)
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    folder = Path(settings.CANON_DATA_DIR) / "backups" / project_slug / f"{when:%Y%m%dT%H%M%S%fZ}"
    folder = folder.joinpath(*parts[:-1])
    folder.mkdir(parents=True, exist_ok=True)
    name = Path(parts[-1])
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    counter = 0
    while True:
        candidate = folder / (name.name if counter == 0 else f"{name.stem}.{counter}{name.suffix}")
        try:
            fd = os.open(candidate, flags, 0o666)
        except FileExistsError:
            counter += 1
            continue
        break
    try:
        try:
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(candidate)
        raise
    return candidate
