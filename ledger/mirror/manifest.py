"""The workspace a project mirrors into, the lock that keeps its exports apart, and the manifest: what
Canon has written or adopted at each path (`MirrorFile`), kept in the database, never in the workspace
where anyone could claim a team file as Canon's."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

from ledger.mirror import fs
from ledger.mirror.paths import LEGACY_MANIFEST
from ledger.mirror.reports import MirrorError
from ledger.models import MirrorFile, Project


def workspace_root(project: Project) -> Path:
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


def load(project: Project, workspace: fs.Workspace, *, dry_run: bool) -> dict[str, MirrorFile]:
    """The project's manifest by path. The first time, what the first release wrote into the workspace
    (`.squad/.canon-manifest.json`: path → sha256 of the bytes it wrote) is taken over, and that file,
    Canon's own, removed."""
    files = {f.path: f for f in MirrorFile.objects.filter(project=project)}
    if files:
        return files
    try:
        data = workspace.read(LEGACY_MANIFEST, max_bytes=4 * 1024 * 1024)
        legacy = json.loads(data) if data else {}
    except (fs.UnsafePath, fs.FileTooLarge, ValueError, OSError):
        return files
    if not isinstance(legacy, dict):
        return files
    for path, digest in sorted(legacy.items()):
        if isinstance(path, str) and isinstance(digest, str) and len(digest) == 64 and len(path) <= 1024:
            files[path] = MirrorFile(project=project, path=path, sha256=digest)
    if not dry_run:
        MirrorFile.objects.bulk_create(files.values())
        workspace.remove(LEGACY_MANIFEST)
    return files


def entry(project: Project, files: dict[str, MirrorFile], path: str) -> MirrorFile:
    """The manifest row of `path`, made (unsaved) when Canon has not met the path before."""
    if path not in files:
        files[path] = MirrorFile(project=project, path=path)
    return files[path]
