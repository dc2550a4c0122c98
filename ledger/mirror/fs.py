"""Safe file access inside a workspace (the copies Canon keeps of what it replaces: `backups`).

A workspace belongs to a team and is treated as hostile. Every access walks the relative path one
component at a time from the workspace's directory handle with `O_NOFOLLOW`, and every file operation
is made relative to the handle of the folder it acts in (`dir_fd`), so a folder swapped for a symbolic
link while an export runs cannot send a write or a removal outside the workspace. Writes are atomic: a
temporary file in the target's folder, written, synced, then renamed over the target.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

__all__ = [
    "TEMP_PREFIX",
    "FileTooLarge",
    "UnsafePath",
    "Workspace",
    "path_parts",
    "seen",
    "write_all",
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


def path_parts(relative: str, *, allow_root: bool = False) -> list[str]:
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
    """Return a fresh temporary name for `name`: `.canon.{name}.{8 random [a-z0-9_]}.tmp` (one read of
    the system's random bytes)."""
    suffix = "".join(
        _TEMP_ALPHABET[byte % len(_TEMP_ALPHABET)] for byte in secrets.token_bytes(_TEMP_RANDOM_LENGTH)
    )
    return f"{TEMP_PREFIX}{name[:_TEMP_NAME_MAX]}.{suffix}.tmp"


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` to `fd`, however short the individual writes are."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


_BATCH_AT = 8  # from this many files on, `Workspace.write_many` syncs the file system once for all


def seen(st: os.stat_result) -> str:
    """What the workspace shows of a file without reading it: its size, modification time and inode. A
    file replaced, edited or touched shows another."""
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


try:
    _SYNCFS: Callable[[int], int] | None = ctypes.CDLL(None, use_errno=True).syncfs
except (OSError, AttributeError):
    _SYNCFS = None


def _sync_file_system(fd: int) -> None:
    """Make every write to the file system that holds `fd` durable: syncfs(2) where the C library has it,
    else sync(2)."""
    if _SYNCFS is None:
        os.sync()
    elif _SYNCFS(fd) != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))


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
        parts = path_parts(relative)
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

    def write(self, relative: str, data: bytes) -> str:
        """Replace (or create) the file `relative` with `data`, atomically; return what `seen` says of the
        new file.

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
            temp, written = self._stage(dir_fd, name, relative, data, sync=True)
            try:
                os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            except BaseException:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(temp, dir_fd=dir_fd)
                raise
            _step("renamed")
            os.fsync(dir_fd)
            return written
        finally:
            os.close(dir_fd)

    def write_many(
        self,
        items: list[tuple[str, bytes]],
        before_rename: Callable[[dict[str, str]], None] | None = None,
    ) -> dict[str, str | Exception]:
        """`write` for many files, each atomically, with one sync of the file system for them all (from
        `_BATCH_AT` files on) instead of one per file: every temporary file is written, then the file
        system synced (`syncfs`), then each renamed over its target, then each folder synced once.
        `before_rename`, when given, is called before the first rename with what `seen` will say of each
        file written durably (the same once it is renamed).

        Returns, per path, what `seen` says of the new file, or the error (OSError, UnsafePath) that kept
        it from being written; the others go on. An exception raised otherwise (a `_step` hook) stops the
        batch: the files renamed so far stay, the temporary files not yet renamed are removed.
        """
        batch = len(items) >= _BATCH_AT  # else each file is synced as `write` syncs it
        results: dict[str, str | Exception] = {}
        folders: dict[str, int | None] = {}
        staged: list[tuple[str, int, str, str, str]] = []  # relative, dir_fd, name, temp, seen
        done = 0  # how many of `staged` were renamed (or failed to be)
        try:
            for relative, data in items:
                try:
                    parent, _, name = relative.rpartition("/")
                    if parent not in folders:
                        folders[parent] = self._open_dir(path_parts(parent, allow_root=True), create=True)
                    dir_fd = folders[parent]
                    if dir_fd is None:
                        raise FileNotFoundError(errno.ENOENT, "folder removed while written", relative)
                    path_parts(relative)
                    temp, written = self._stage(dir_fd, name, relative, data, sync=not batch)
                except (OSError, UnsafePath) as exc:
                    results[relative] = exc
                    continue
                staged.append((relative, dir_fd, name, temp, written))
            if staged and batch:
                try:
                    _sync_file_system(staged[0][1])
                except OSError as exc:
                    for relative, *_ in staged:
                        results[relative] = exc
                    return results  # the temporary files are removed below
            if before_rename is not None:
                before_rename({relative: written for relative, _, _, _, written in staged})
            while done < len(staged):
                relative, dir_fd, name, temp, written = staged[done]
                if batch:
                    _step("temp-synced")
                done += 1
                try:
                    os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                except OSError as exc:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(temp, dir_fd=dir_fd)
                    results[relative] = exc
                    continue
                results[relative] = written
                _step("renamed")
            for dir_fd in {fd for fd in folders.values() if fd is not None}:
                os.fsync(dir_fd)
        finally:
            for _, dir_fd, _, temp, _ in staged[done:]:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(temp, dir_fd=dir_fd)
            for fd in folders.values():
                if fd is not None:
                    os.close(fd)
        return results

    def _stage(self, dir_fd: int, name: str, relative: str, data: bytes, *, sync: bool) -> tuple[str, str]:
        """Write `data` into a new temporary file beside `name` in the folder `dir_fd`, with the mode of
        the file it will replace, synced when `sync`; return its name and what `seen` says of it (the same
        once renamed). The temporary file is removed if anything fails."""
        try:
            current = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            mode = _NEW_FILE_MODE
        else:
            if not stat.S_ISREG(current.st_mode):
                raise UnsafePath(f"{relative!r} is {_kind_of(current)}, not a regular file")
            mode = current.st_mode & 0o777
        temp, fd = self._create_temp(dir_fd, name)
        try:
            try:
                _step("temp-created")
                write_all(fd, data)
                _step("temp-written")
                os.fchmod(fd, mode)
                if sync:
                    os.fsync(fd)
                    _step("temp-synced")
                written = seen(os.fstat(fd))
            finally:
                os.close(fd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=dir_fd)
            raise
        return temp, written

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
        dir_fd = self._open_dir(path_parts(relative_dir, allow_root=True))
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

    def folder_seen(self, relative_dir: str) -> str | None:
        """What `seen` says of the folder `relative_dir` itself, None when absent: its modification time
        changes whenever a file in it is created, removed or renamed (a file edited in place leaves it).
        Raises UnsafePath for a link or a non-folder on the way or there."""
        dir_fd = self._open_dir(path_parts(relative_dir, allow_root=True))
        if dir_fd is None:
            return None
        try:
            return seen(os.fstat(dir_fd))
        finally:
            os.close(dir_fd)

    def file_seen(self, relative: str) -> str | None:
        """What `seen` says of the regular file `relative`; None when absent or not a regular file."""
        try:
            st = self._lstat(relative)
        except _InTheWay:
            return None
        return seen(st) if st is not None and stat.S_ISREG(st.st_mode) else None

    def survey(self, relative_dir: str, *, clean: bool = True) -> dict[str, str]:
        """The regular files directly in `relative_dir` ("" is the workspace), each with what `seen` says
        of it, once the temporary files a crash left there are removed (`clean_temp_files`, unless not
        `clean`); {} when absent. Raises UnsafePath for a link or a non-folder on the way or there."""
        return self._sweep(relative_dir, clean=clean)[0]

    def clean_temp_files(self, relative_dir: str) -> list[str]:
        """Remove the regular files named like Canon's temporary files in `relative_dir` (left by a
        crash) and return their sorted relative paths; other files, links and folders stay.

        [] when absent; raises UnsafePath for a link or a non-folder on the way or at `relative_dir`.
        """
        return self._sweep(relative_dir)[1]

    def _sweep(self, relative_dir: str, *, clean: bool = True) -> tuple[dict[str, str], list[str]]:
        """`survey` and `clean_temp_files` in one listing of the folder."""
        listed = self._entries(relative_dir)
        if listed is None:
            return {}, []
        dir_fd, names = listed
        prefix = f"{relative_dir}/" if relative_dir else ""
        found, removed = {}, []
        try:
            for name in names:
                try:
                    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                    if not stat.S_ISREG(st.st_mode):
                        continue
                    if not (name.startswith(TEMP_PREFIX) and _TEMP_PATTERN.match(name)):
                        found[name] = f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"  # `seen`
                    elif clean:
                        os.unlink(name, dir_fd=dir_fd)
                        removed.append(prefix + name)
                except FileNotFoundError:
                    continue
        finally:
            os.close(dir_fd)
        return found, sorted(removed)
