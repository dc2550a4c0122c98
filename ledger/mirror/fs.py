"""Safe file access inside a workspace, and backups into Canon's own data directory.

A workspace belongs to a team and is treated as hostile. Every access walks the relative path one
component at a time from the workspace's directory handle with `O_NOFOLLOW`, and every file operation
is made relative to the handle of the folder it acts in (`dir_fd`), so a folder swapped for a symbolic
link while an export runs cannot send a write or a removal outside the workspace. Writes are atomic: a
temporary file in the target's folder, written, synced, then renamed over the target.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from django.conf import settings

__all__ = [
    "TEMP_PREFIX",
    "FileTooLarge",
    "UnsafePath",
    "Workspace",
    "backup",
]

TEMP_PREFIX = ".canon."

_TEMP_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789_"
_TEMP_RANDOM_LENGTH = 8
_TEMP_NAME_MAX = 200  # keeps the temporary name under the 255-byte limit for long file names
_TEMP_ATTEMPTS = 100
_TEMP_PATTERN = re.compile(
    rf"\A{re.escape(TEMP_PREFIX)}.+\.[a-z0-9_]{{{_TEMP_RANDOM_LENGTH}}}\.tmp\Z", re.DOTALL
)
_READ_CHUNK = 1 << 16

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePath(Exception):
    """A path refused: a link, a non-regular file, a non-folder on the way, `..`, `.`, or absolute."""


class FileTooLarge(Exception):
    """A file bigger than the `max_bytes` allowed to `Workspace.read`."""


def _read_umask() -> int:
    """Return the process umask without changing it where `/proc` tells it, else by setting it back."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    current = os.umask(0)
    os.umask(current)
    return current


_UMASK = _read_umask()
_NEW_FILE_MODE = 0o666 & ~_UMASK


def _step(name: str) -> None:
    """Mark a step of `Workspace.write`; does nothing (tests replace it to simulate a crash there)."""


def _parts(relative: str, *, allow_root: bool = False) -> list[str]:
    """Split a workspace-relative path on `/`, refusing absolute paths and `..`, `.` or empty parts.

    With `allow_root`, the empty string names the workspace folder itself and gives no parts.
    """
    if relative == "" and allow_root:
        return []
    if relative.startswith("/"):
        raise UnsafePath(f"absolute path refused: {relative!r}")
    if "\x00" in relative:
        raise UnsafePath(f"NUL byte in path refused: {relative!r}")
    parts = relative.split("/")
    for part in parts:
        if part in ("", ".", ".."):
            raise UnsafePath(f"path part {part!r} refused in {relative!r}")
    return parts


class _InTheWay(UnsafePath):
    """A link or a non-folder where a folder on the way should be; `kind` tells which."""

    def __init__(self, part: str, kind: str) -> None:
        what = "a symbolic link" if kind == "link" else "not a folder"
        super().__init__(f"{part!r} on the way is {what}")
        self.kind = kind


def _in_the_way(dir_fd: int, name: str) -> _InTheWay:
    """Return the error for `name` in the folder `dir_fd` that could not be opened as a folder."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return _InTheWay(name, "other")
    return _InTheWay(name, "link" if stat.S_ISLNK(st.st_mode) else "other")


def _kind_of(st: os.stat_result) -> str:
    """Return "file", "dir", "link" or "other" for an `lstat` result."""
    if stat.S_ISREG(st.st_mode):
        return "file"
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    if stat.S_ISLNK(st.st_mode):
        return "link"
    return "other"


def _temp_name(name: str) -> str:
    """Return a fresh temporary name for `name`: `.canon.{name}.{8 random [a-z0-9_]}.tmp`."""
    suffix = "".join(secrets.choice(_TEMP_ALPHABET) for _ in range(_TEMP_RANDOM_LENGTH))
    return f"{TEMP_PREFIX}{name[:_TEMP_NAME_MAX]}.{suffix}.tmp"


def _write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` to `fd`, however short the individual writes are."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class Workspace:
    """A workspace folder opened as a directory handle; every access is made relative to it.

    `root` itself may be a symbolic link (the operator configured it); nothing below it may be.
    Use it as a context manager, or call `close()`.
    """

    root: Path

    def __init__(self, root: Path) -> None:
        """Open `root` as a directory handle (following `root` itself if it is a link)."""
        self.root = Path(root)
        self._root_fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)

    def close(self) -> None:
        """Close the directory handle; calling it again does nothing."""
        fd, self._root_fd = self._root_fd, -1
        if fd >= 0:
            os.close(fd)

    def __enter__(self) -> Workspace:
        """Return the open workspace."""
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Close the directory handle."""
        self.close()

    # -- walking --------------------------------------------------------------------------------

    def _open_dir(self, parts: list[str], *, create: bool = False) -> int | None:
        """Open the folder `parts` below the root, one component at a time, never following a link.

        Returns a new directory handle the caller must close, or None when a folder on the way is
        absent (with `create`, missing folders are made with mode 0o777 & ~umask instead). Raises
        UnsafePath for a link or anything but a folder on the way.
        """
        if self._root_fd < 0:
            raise ValueError("workspace is closed")
        fd = os.dup(self._root_fd)
        try:
            for part in parts:
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o777, dir_fd=fd)
                try:
                    next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    os.close(fd)
                    return None
                except OSError as error:
                    if error.errno in (errno.ENOTDIR, errno.ELOOP):
                        raise _in_the_way(fd, part) from error
                    raise
                fd, previous = next_fd, fd
                os.close(previous)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _open_parent(self, relative: str, *, create: bool = False) -> tuple[int | None, str]:
        """Open the folder holding `relative` and return its handle (None when absent) and the name."""
        parts = _parts(relative)
        return self._open_dir(parts[:-1], create=create), parts[-1]

    def _lstat(self, relative: str) -> os.stat_result | None:
        """Return the `lstat` of `relative` (a link is not followed), or None when it is absent."""
        dir_fd, name = self._open_parent(relative)
        if dir_fd is None:
            return None
        try:
            return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        finally:
            os.close(dir_fd)

    # -- files ----------------------------------------------------------------------------------

    def read(self, relative: str, *, max_bytes: int | None = None) -> bytes | None:
        """Return the bytes of the regular file `relative`, or None when it or a folder on the way is
        absent.

        Raises UnsafePath for a link anywhere on the way or at the end, or a non-regular file (a FIFO
        or a device is never opened for reading), and FileTooLarge past `max_bytes`, checked on the
        open file before reading and again while reading in case it grows.
        """
        dir_fd, name = self._open_parent(relative)
        if dir_fd is None:
            return None
        try:
            try:
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                return None
            if not stat.S_ISREG(st.st_mode):
                raise UnsafePath(f"{relative!r} is {_kind_of(st)}, not a regular file")
            try:
                fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
            except FileNotFoundError:
                return None
            except OSError as error:
                if error.errno == errno.ELOOP:
                    raise UnsafePath(f"{relative!r} is a symbolic link") from error
                raise
        finally:
            os.close(dir_fd)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise UnsafePath(f"{relative!r} is {_kind_of(st)}, not a regular file")
            if max_bytes is not None and st.st_size > max_bytes:
                raise FileTooLarge(f"{relative!r} is {st.st_size} bytes, more than {max_bytes}")
            chunks: list[bytes] = []
            total = 0
            while True:
                want = _READ_CHUNK if max_bytes is None else min(_READ_CHUNK, max_bytes + 1 - total)
                chunk = os.read(fd, want)
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
                if max_bytes is not None and total > max_bytes:
                    raise FileTooLarge(f"{relative!r} grew past {max_bytes} bytes while read")
            return b"".join(chunks)
        finally:
            os.close(fd)

    def write(self, relative: str, data: bytes) -> None:
        """Replace (or create) the file `relative` with `data`, atomically.

        Missing folders are created (0o777 & ~umask). The temporary file is created with
        O_CREAT|O_EXCL|O_NOFOLLOW in the target's folder, written, given the permission bits of the
        file it replaces (or 0o666 & ~umask for a new file), synced, renamed over the target, and the
        folder is synced. On any exception before the rename the temporary file is removed. Raises
        UnsafePath for a link on the way, or when the target is a link, a folder or another
        non-regular file. `_step` is called after each step.
        """
        dir_fd, name = self._open_parent(relative, create=True)
        if dir_fd is None:  # a folder vanished between its creation and its opening
            raise FileNotFoundError(errno.ENOENT, "folder removed while written", relative)
        try:
            try:
                current = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                mode = _NEW_FILE_MODE
            else:
                if not stat.S_ISREG(current.st_mode):
                    raise UnsafePath(f"{relative!r} is {_kind_of(current)}, not a regular file")
                mode = current.st_mode & 0o777
            temp, fd = self._create_temp(dir_fd, name)
            renamed = False
            try:
                try:
                    _step("temp-created")
                    _write_all(fd, data)
                    _step("temp-written")
                    os.fchmod(fd, mode)
                    os.fsync(fd)
                    _step("temp-synced")
                finally:
                    os.close(fd)
                os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                renamed = True
                _step("renamed")
                os.fsync(dir_fd)
            finally:
                if not renamed:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(temp, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)

    @staticmethod
    def _create_temp(dir_fd: int, name: str) -> tuple[str, int]:
        """Create a fresh temporary file for `name` in the folder `dir_fd`; return its name and handle."""
        for _ in range(_TEMP_ATTEMPTS):
            temp = _temp_name(name)
            try:
                return temp, os.open(temp, _TEMP_FLAGS, 0o600, dir_fd=dir_fd)
            except FileExistsError:
                continue
        raise FileExistsError(errno.EEXIST, "no free temporary name", name)

    def remove(self, relative: str) -> None:
        """Remove the regular file `relative` by its folder's handle; an absent file is fine.

        Raises UnsafePath for a link on the way or at the end, a folder or another non-regular file.
        """
        dir_fd, name = self._open_parent(relative)
        if dir_fd is None:
            return
        try:
            try:
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                return
            if not stat.S_ISREG(st.st_mode):
                raise UnsafePath(f"{relative!r} is {_kind_of(st)}, not a regular file")
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)

    # -- folders --------------------------------------------------------------------------------

    def _entries(self, relative_dir: str) -> tuple[int, list[str]] | None:
        """Open the folder `relative_dir` ("" is the workspace) and list it; None when absent.

        The caller must close the returned handle.
        """
        dir_fd = self._open_dir(_parts(relative_dir, allow_root=True))
        if dir_fd is None:
            return None
        try:
            return dir_fd, os.listdir(dir_fd)
        except BaseException:
            os.close(dir_fd)
            raise

    def files(self, relative_dir: str, suffix: str = ".md") -> list[str]:
        """Return the sorted names in the folder `relative_dir` ending in `suffix`, [] when absent.

        Links and non-regular entries are included so callers can report them (`kind()` tells).
        Raises UnsafePath for a link or a non-folder on the way or at `relative_dir` itself.
        """
        listed = self._entries(relative_dir)
        if listed is None:
            return []
        dir_fd, names = listed
        os.close(dir_fd)
        return sorted(name for name in names if name.endswith(suffix))

    def kind(self, relative: str) -> str:
        """Return what is at `relative` without following a link: "file", "dir", "link", "other" or
        "absent".

        A link on the way gives "link", and a file or anything else but a folder on the way gives
        "other": nothing is reached through them. Raises UnsafePath only for `..`, `.`, empty parts
        or an absolute path.
        """
        try:
            st = self._lstat(relative)
        except _InTheWay as blocked:
            return blocked.kind
        return "absent" if st is None else _kind_of(st)

    def folders(self, relative_dir: str) -> list[str]:
        """Return the sorted names of the real sub-folders of `relative_dir` (links left out).

        [] when absent; raises UnsafePath for a link or a non-folder on the way or at `relative_dir`.
        """
        listed = self._entries(relative_dir)
        if listed is None:
            return []
        dir_fd, names = listed
        try:
            found = []
            for name in names:
                try:
                    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                except FileNotFoundError:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    found.append(name)
            return sorted(found)
        finally:
            os.close(dir_fd)

    def clean_temp_files(self, relative_dir: str) -> list[str]:
        """Remove the regular files named like Canon's temporary files in `relative_dir` (left by a
        crash) and return their sorted relative paths; other files, links and folders stay.

        [] when absent; raises UnsafePath for a link or a non-folder on the way or at `relative_dir`.
        """
        listed = self._entries(relative_dir)
        if listed is None:
            return []
        dir_fd, names = listed
        prefix = f"{relative_dir}/" if relative_dir else ""
        removed = []
        try:
            for name in sorted(names):
                if not _TEMP_PATTERN.match(name):
                    continue
                try:
                    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                    if not stat.S_ISREG(st.st_mode):
                        continue
                    os.unlink(name, dir_fd=dir_fd)
                except FileNotFoundError:
                    continue
                removed.append(prefix + name)
        finally:
            os.close(dir_fd)
        return removed


def backup(data: bytes, *, project_slug: str, relative: str, when: datetime) -> Path:
    """Write a copy of `data` under `CANON_DATA_DIR/backups/<project_slug>/<when>/<relative>` and
    return its path.

    `when` is written as `%Y%m%dT%H%M%S%fZ` (an aware time is converted to UTC first). Folders are
    created; an existing copy is never overwritten: the file is created with O_EXCL, and when the name
    is taken a counter is added before the extension (`notes.1.md`, `notes.2.md`, ...). Raises
    UnsafePath for a slug or a relative path with `..`, `.`, empty parts, or an absolute path.
    """
    slug_parts = _parts(project_slug)
    if len(slug_parts) != 1:
        raise UnsafePath(f"project slug refused: {project_slug!r}")
    parts = _parts(relative)
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
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(candidate)
        raise
    return candidate
