"""Safe workspace file access of the mirror (`ledger.mirror.fs`): links refused, atomic writes, backups."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from ledger.mirror import backups, fs

STEPS = ["temp-created", "temp-written", "temp-synced", "renamed"]
UNSAFE_PATHS = ["..", "../x.md", "a/../b.md", "/etc/passwd", ".", "./x.md", "a//b.md", "a/", ""]
PROJECT_DIR = Path(__file__).resolve().parents[2]


class Crash(Exception):
    """Raised by the `_step` hook to simulate a failure at one step of a write."""


def crash_at(target: str) -> Callable[[str], None]:
    def step(name: str) -> None:
        if name == target:
            raise Crash(name)

    return step


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def temp_files(folder: Path) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name.startswith(fs.TEMP_PREFIX))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


@pytest.fixture
def ws(root: Path) -> Iterator[fs.Workspace]:
    with fs.Workspace(root) as workspace:
        yield workspace


# -- read ---------------------------------------------------------------------------------------


def test_read_returns_the_file_bytes(root: Path, ws: fs.Workspace) -> None:
    (root / "docs").mkdir()
    (root / "docs" / "a.md").write_bytes(b"hello\n")
    assert ws.read("docs/a.md") == b"hello\n"


def test_read_of_an_absent_file_is_none(ws: fs.Workspace) -> None:
    assert ws.read("missing.md") is None


def test_read_with_an_absent_folder_on_the_way_is_none(ws: fs.Workspace) -> None:
    assert ws.read("nowhere/deeper/a.md") is None


def test_read_past_max_bytes_raises_file_too_large(root: Path, ws: fs.Workspace) -> None:
    (root / "big.md").write_bytes(b"x" * 11)
    with pytest.raises(fs.FileTooLarge):
        ws.read("big.md", max_bytes=10)


def test_read_of_exactly_max_bytes_returns_the_bytes(root: Path, ws: fs.Workspace) -> None:
    (root / "big.md").write_bytes(b"x" * 10)
    assert ws.read("big.md", max_bytes=10) == b"x" * 10


def test_read_refuses_a_link_as_the_final_file(root: Path, outside: Path, ws: fs.Workspace) -> None:
    (outside / "secret.md").write_bytes(b"secret")
    (root / "a.md").symlink_to(outside / "secret.md")
    with pytest.raises(fs.UnsafePath):
        ws.read("a.md")


def test_read_refuses_a_link_as_a_folder_on_the_way(root: Path, outside: Path, ws: fs.Workspace) -> None:
    (outside / "secret.md").write_bytes(b"secret")
    (root / "docs").symlink_to(outside)
    with pytest.raises(fs.UnsafePath):
        ws.read("docs/secret.md")


def test_read_refuses_a_fifo_without_blocking(root: Path, ws: fs.Workspace) -> None:
    os.mkfifo(root / "pipe.md")
    with pytest.raises(fs.UnsafePath):
        ws.read("pipe.md")


def test_read_refuses_a_folder(root: Path, ws: fs.Workspace) -> None:
    (root / "docs").mkdir()
    with pytest.raises(fs.UnsafePath):
        ws.read("docs")


def test_read_refuses_a_file_where_a_folder_is_on_the_way(root: Path, ws: fs.Workspace) -> None:
    (root / "docs").write_bytes(b"not a folder")
    with pytest.raises(fs.UnsafePath):
        ws.read("docs/a.md")


@pytest.mark.parametrize("relative", UNSAFE_PATHS)
def test_read_refuses_dot_dot_dot_empty_and_absolute_paths(ws: fs.Workspace, relative: str) -> None:
    with pytest.raises(fs.UnsafePath):
        ws.read(relative)


def test_workspace_root_may_itself_be_a_link(root: Path, tmp_path: Path) -> None:
    (root / "a.md").write_bytes(b"via link")
    (tmp_path / "configured").symlink_to(root)
    with fs.Workspace(tmp_path / "configured") as workspace:
        assert workspace.read("a.md") == b"via link"


def test_close_can_be_called_twice(root: Path) -> None:
    workspace = fs.Workspace(root)
    workspace.close()
    workspace.close()


# -- write ----------------------------------------------------------------------------------------


def test_write_creates_the_file_and_missing_folders(root: Path, ws: fs.Workspace) -> None:
    ws.write("a/b/c.md", b"content")
    assert (root / "a" / "b" / "c.md").read_bytes() == b"content"


def test_write_replaces_an_existing_file(root: Path, ws: fs.Workspace) -> None:
    (root / "a.md").write_bytes(b"old")
    ws.write("a.md", b"new")
    assert (root / "a.md").read_bytes() == b"new"


def test_write_leaves_no_temp_file_behind(root: Path, ws: fs.Workspace) -> None:
    ws.write("docs/a.md", b"content")
    assert temp_files(root / "docs") == []


def test_write_refuses_a_link_as_the_final_file(root: Path, outside: Path, ws: fs.Workspace) -> None:
    (outside / "target.md").write_bytes(b"untouched")
    (root / "a.md").symlink_to(outside / "target.md")
    with pytest.raises(fs.UnsafePath):
        ws.write("a.md", b"evil")
    assert (outside / "target.md").read_bytes() == b"untouched"
    assert (root / "a.md").is_symlink()


def test_write_refuses_a_dangling_link_as_the_final_file(root: Path, outside: Path, ws: fs.Workspace) -> None:
    (root / "a.md").symlink_to(outside / "created.md")
    with pytest.raises(fs.UnsafePath):
        ws.write("a.md", b"evil")
    assert os.listdir(outside) == []


def test_write_refuses_a_link_as_a_folder_on_the_way(root: Path, outside: Path, ws: fs.Workspace) -> None:
    (root / "docs").symlink_to(outside)
    with pytest.raises(fs.UnsafePath):
        ws.write("docs/sub/a.md", b"evil")
    assert os.listdir(outside) == []


def test_write_refuses_a_folder_as_the_final_file(root: Path, ws: fs.Workspace) -> None:
    (root / "a.md").mkdir()
    with pytest.raises(fs.UnsafePath):
        ws.write("a.md", b"data")
    assert (root / "a.md").is_dir()


@pytest.mark.parametrize("relative", UNSAFE_PATHS)
def test_write_refuses_dot_dot_dot_empty_and_absolute_paths(
    tmp_path: Path, ws: fs.Workspace, relative: str
) -> None:
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(fs.UnsafePath):
        ws.write(relative, b"evil")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_folder_swapped_for_a_link_before_write_lands_nothing_outside(
    root: Path, outside: Path, ws: fs.Workspace
) -> None:
    (root / "docs").mkdir()
    (root / "docs").rename(root / "docs-old")
    (root / "docs").symlink_to(outside)
    with pytest.raises(fs.UnsafePath):
        ws.write("docs/a.md", b"evil")
    assert os.listdir(outside) == []


def test_folder_swapped_for_a_link_during_write_lands_nothing_outside(
    root: Path, outside: Path, ws: fs.Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "docs").mkdir()

    def swap(name: str) -> None:
        if name == "temp-created":
            (root / "docs").rename(root / "docs-moved")
            (root / "docs").symlink_to(outside)

    monkeypatch.setattr(fs, "_step", swap)
    ws.write("docs/a.md", b"content")
    assert os.listdir(outside) == []
    assert (root / "docs-moved" / "a.md").read_bytes() == b"content"


@pytest.mark.parametrize("mode", [0o644, 0o664, 0o600])
def test_write_keeps_the_mode_of_the_file_it_replaces(root: Path, ws: fs.Workspace, mode: int) -> None:
    (root / "a.md").write_bytes(b"old")
    os.chmod(root / "a.md", mode)
    ws.write("a.md", b"new")
    assert (root / "a.md").stat().st_mode & 0o777 == mode


def test_write_gives_a_new_file_the_umask_default_mode(root: Path, ws: fs.Workspace) -> None:
    ws.write("a.md", b"new")
    assert (root / "a.md").stat().st_mode & 0o777 == 0o666 & ~current_umask()


def test_write_gives_new_folders_the_umask_default_mode(root: Path, ws: fs.Workspace) -> None:
    ws.write("docs/a.md", b"new")
    assert (root / "docs").stat().st_mode & 0o777 == 0o777 & ~current_umask()


@pytest.mark.parametrize("step", STEPS)
def test_crash_at_a_step_leaves_the_old_or_the_new_file_whole_and_no_temp(
    root: Path, ws: fs.Workspace, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    (root / "a.md").write_bytes(b"old content")
    monkeypatch.setattr(fs, "_step", crash_at(step))
    with pytest.raises(Crash):
        ws.write("a.md", b"new content, longer than the old")
    expected = b"new content, longer than the old" if step == "renamed" else b"old content"
    assert (root / "a.md").read_bytes() == expected
    assert temp_files(root) == []


@pytest.mark.parametrize("step", STEPS)
def test_crash_at_a_step_of_a_new_file_leaves_it_absent_or_whole_and_no_temp(
    root: Path, ws: fs.Workspace, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    monkeypatch.setattr(fs, "_step", crash_at(step))
    with pytest.raises(Crash):
        ws.write("a.md", b"new content")
    if step == "renamed":
        assert (root / "a.md").read_bytes() == b"new content"
    else:
        assert not (root / "a.md").exists()
    assert temp_files(root) == []


def test_write_calls_every_step_in_order(ws: fs.Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    monkeypatch.setattr(fs, "_step", seen.append)
    ws.write("a.md", b"data")
    assert seen == STEPS


# -- remove ---------------------------------------------------------------------------------------


def test_remove_deletes_the_file(root: Path, ws: fs.Workspace) -> None:
    (root / "a.md").write_bytes(b"x")
    ws.remove("a.md")
    assert not (root / "a.md").exists()


def test_remove_of_an_absent_file_is_fine(ws: fs.Workspace) -> None:
    ws.remove("nowhere/a.md")


def test_remove_refuses_a_link_as_the_final_file(root: Path, outside: Path, ws: fs.Workspace) -> None:
    (outside / "target.md").write_bytes(b"kept")
    (root / "a.md").symlink_to(outside / "target.md")
    with pytest.raises(fs.UnsafePath):
        ws.remove("a.md")
    assert (root / "a.md").is_symlink()
    assert (outside / "target.md").read_bytes() == b"kept"


def test_remove_refuses_a_link_as_a_folder_on_the_way(root: Path, outside: Path, ws: fs.Workspace) -> None:
    (outside / "a.md").write_bytes(b"kept")
    (root / "docs").symlink_to(outside)
    with pytest.raises(fs.UnsafePath):
        ws.remove("docs/a.md")
    assert (outside / "a.md").read_bytes() == b"kept"


@pytest.mark.parametrize("relative", UNSAFE_PATHS)
def test_remove_refuses_dot_dot_dot_empty_and_absolute_paths(ws: fs.Workspace, relative: str) -> None:
    with pytest.raises(fs.UnsafePath):
        ws.remove(relative)


# -- kind, files, folders -------------------------------------------------------------


def test_kind_tells_file_dir_link_other_and_absent(root: Path, outside: Path, ws: fs.Workspace) -> None:
    (root / "f.md").write_bytes(b"x")
    (root / "d").mkdir()
    (root / "l.md").symlink_to(outside)
    os.mkfifo(root / "p.md")
    kinds = [ws.kind(name) for name in ("f.md", "d", "l.md", "p.md", "none.md", "nodir/x.md")]
    assert kinds == ["file", "dir", "link", "other", "absent", "absent"]


def test_kind_of_a_path_through_a_linked_folder_is_link(root: Path, outside: Path, ws: fs.Workspace) -> None:
    (outside / "a.md").write_bytes(b"x")
    (root / "docs").symlink_to(outside)
    assert ws.kind("docs/a.md") == "link"


def test_kind_of_a_path_through_a_file_is_other(root: Path, ws: fs.Workspace) -> None:
    (root / "docs").write_bytes(b"x")
    assert ws.kind("docs/a.md") == "other"


@pytest.mark.parametrize("relative", UNSAFE_PATHS)
def test_kind_refuses_dot_dot_dot_empty_and_absolute_paths(ws: fs.Workspace, relative: str) -> None:
    with pytest.raises(fs.UnsafePath):
        ws.kind(relative)


def test_files_lists_sorted_names_with_the_suffix_links_included(
    root: Path, outside: Path, ws: fs.Workspace
) -> None:
    docs = root / "docs"
    docs.mkdir()
    (docs / "b.md").write_bytes(b"x")
    (docs / "a.md").write_bytes(b"x")
    (docs / "c.txt").write_bytes(b"x")
    (docs / "link.md").symlink_to(outside)
    assert ws.files("docs") == ["a.md", "b.md", "link.md"]


def test_files_takes_another_suffix(root: Path, ws: fs.Workspace) -> None:
    (root / "a.json").write_bytes(b"{}")
    (root / "b.md").write_bytes(b"x")
    assert ws.files("", suffix=".json") == ["a.json"]


def test_files_of_an_absent_folder_is_empty(ws: fs.Workspace) -> None:
    assert ws.files("nowhere") == []


def test_files_refuses_a_linked_folder(root: Path, outside: Path, ws: fs.Workspace) -> None:
    (outside / "a.md").write_bytes(b"x")
    (root / "docs").symlink_to(outside)
    with pytest.raises(fs.UnsafePath):
        ws.files("docs")


def test_folders_lists_sorted_real_sub_folders_without_links(
    root: Path, outside: Path, ws: fs.Workspace
) -> None:
    (root / "b").mkdir()
    (root / "a").mkdir()
    (root / "f.md").write_bytes(b"x")
    (root / "link").symlink_to(outside)
    assert ws.folders("") == ["a", "b"]


def test_folders_of_an_absent_folder_is_empty(ws: fs.Workspace) -> None:
    assert ws.folders("nowhere") == []


# -- clean_temp_files -------------------------------------------------------------------------------


def test_clean_temp_files_removes_only_canon_temp_files(root: Path, ws: fs.Workspace) -> None:
    docs = root / "docs"
    docs.mkdir()
    (docs / ".canon.a.md.abc_1234.tmp").write_bytes(b"partial")
    (docs / ".canon.notes.md.zzzzzzzz.tmp").write_bytes(b"partial")
    team_files = [".notes.tmp", ".canon-ideas.md", ".canon.notes.tmp", ".canon.a.md.ABCDEFGH.tmp", "a.md"]
    for name in team_files:
        (docs / name).write_bytes(b"team")
    removed = ws.clean_temp_files("docs")
    assert removed == ["docs/.canon.a.md.abc_1234.tmp", "docs/.canon.notes.md.zzzzzzzz.tmp"]
    assert sorted(os.listdir(docs)) == sorted(team_files)


def test_clean_temp_files_leaves_links_and_folders_named_like_temp_files(
    root: Path, outside: Path, ws: fs.Workspace
) -> None:
    (outside / "t.md").write_bytes(b"kept")
    (root / ".canon.a.md.abcdefgh.tmp").symlink_to(outside / "t.md")
    (root / ".canon.b.md.abcdefgh.tmp").mkdir()
    assert ws.clean_temp_files("") == []
    assert (outside / "t.md").read_bytes() == b"kept"


def test_clean_temp_files_of_an_absent_folder_is_empty(ws: fs.Workspace) -> None:
    assert ws.clean_temp_files("nowhere") == []


def test_clean_temp_files_removes_a_temp_file_a_write_would_name(
    root: Path, ws: fs.Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    names: list[str] = []

    def leave_a_copy(name: str) -> None:
        if name == "temp-written":
            (temp,) = temp_files(root)
            names.append(temp)
            os.link(root / temp, root / f"{temp}.keep")

    monkeypatch.setattr(fs, "_step", leave_a_copy)
    ws.write("a.md", b"x")
    (root / f"{names[0]}.keep").rename(root / names[0])
    assert ws.clean_temp_files("") == names


# -- backup ---------------------------------------------------------------------------------------


@pytest.fixture
def data_dir(tmp_path: Path, settings: Any) -> Path:
    settings.CANON_DATA_DIR = tmp_path / "canon-data"
    return tmp_path / "canon-data"


WHEN = datetime(2025, 3, 4, 5, 6, 7, 890123, tzinfo=UTC)


def test_backup_writes_a_copy_under_the_data_dir(data_dir: Path) -> None:
    path = backups.backup(b"team text", project_slug="alpha", relative="docs/a.md", when=WHEN)
    assert path == data_dir / "backups" / "alpha" / "20250304T050607890123Z" / "docs" / "a.md"
    assert path.read_bytes() == b"team text"


def test_backup_never_overwrites_an_existing_copy(data_dir: Path) -> None:
    first = backups.backup(b"first", project_slug="alpha", relative="docs/a.md", when=WHEN)
    second = backups.backup(b"second", project_slug="alpha", relative="docs/a.md", when=WHEN)
    third = backups.backup(b"third", project_slug="alpha", relative="docs/a.md", when=WHEN)
    assert [first.name, second.name, third.name] == ["a.md", "a.1.md", "a.2.md"]
    assert [p.read_bytes() for p in (first, second, third)] == [b"first", b"second", b"third"]


def test_backup_writes_an_aware_time_in_utc(data_dir: Path) -> None:
    when = WHEN.astimezone(timezone(timedelta(hours=2)))
    path = backups.backup(b"x", project_slug="alpha", relative="a.md", when=when)
    assert path.parent.name == "20250304T050607890123Z"


@pytest.mark.parametrize("relative", UNSAFE_PATHS)
def test_backup_refuses_dot_dot_dot_empty_and_absolute_paths(data_dir: Path, relative: str) -> None:
    with pytest.raises(fs.UnsafePath):
        backups.backup(b"x", project_slug="alpha", relative=relative, when=WHEN)


@pytest.mark.parametrize("slug", ["..", "a/b", "", "/abs"])
def test_backup_refuses_an_unsafe_project_slug(data_dir: Path, slug: str) -> None:
    with pytest.raises(fs.UnsafePath):
        backups.backup(b"x", project_slug=slug, relative="a.md", when=WHEN)


# -- a real kill -9 -------------------------------------------------------------------------------

WRITER = """
import sys
import django

django.setup()
from pathlib import Path
from ledger.mirror import fs

size = int(sys.argv[2])
with fs.Workspace(Path(sys.argv[1])) as workspace:
    print("ready", flush=True)
    turn = 0
    while True:
        workspace.write("docs/big.md", bytes([65 + turn % 2]) * size)
        turn += 1
"""


def test_kill_9_during_writes_leaves_a_whole_file_and_clean_temp_files_cleans_up(root: Path) -> None:
    size = 4 * 1024 * 1024
    docs = root / "docs"
    docs.mkdir()
    (docs / "big.md").write_bytes(b"old")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root), str(size)],
        cwd=PROJECT_DIR,
        env=env,
        stdout=subprocess.PIPE,
    )
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == b"ready"
        deadline = time.monotonic() + 20
        # Kill while a later write is under way: the target already replaced once, a temp file present.
        while time.monotonic() < deadline:
            if (docs / "big.md").stat().st_size == size and temp_files(docs):
                break
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        if writer.stdout is not None:
            writer.stdout.close()
    assert writer.returncode == -signal.SIGKILL
    assert (docs / "big.md").read_bytes() in (b"old", b"A" * size, b"B" * size)
    left = temp_files(docs)
    with fs.Workspace(root) as workspace:
        assert workspace.clean_temp_files("docs") == [f"docs/{name}" for name in left]
    assert os.listdir(docs) == ["big.md"]
