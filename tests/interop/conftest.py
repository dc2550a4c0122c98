"""Fixtures of the interop tests: the installed Squad program, a team folder Squad created, and Canon's
project mirroring it.

The tests never skip: without Squad installed (`make squad-tools`) every one of them fails and says so.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ledger.models import Project
from tests.interop import squad
from tests.interop.canon import mirrored, sync

# The team Squad's casting adds to a fresh folder (besides its own Scribe, Ralph and Rai).
MEMBERS = [
    {"name": "Marlow", "role": "Backend Developer", "scope": "Sync service and its schema", "emoji": "⚙️"},
    {"name": "Juno", "role": "Frontend Developer", "scope": "Terminal UI panels and themes", "emoji": "⚛️"},
]
PROJECT = "Tidepool — a terminal dashboard for fishing fleets (Ålesund, Bergen, Tromsø)"


@pytest.fixture(scope="session")
def squad_program() -> Iterator[dict[str, str]]:
    """The running Squad's versions; fails every test that needs it when it is not installed."""
    reason = squad.missing()
    if reason:
        pytest.fail(reason, pytrace=False)
    found = squad.versions()
    wanted = {"cli": squad.CLI_VERSION, "sdk": squad.SDK_VERSION}
    if {k: found[k] for k in wanted} != wanted:
        pytest.fail(f"Squad {found} is installed, not {wanted}: run `make squad-tools`", pytrace=False)
    major, minor = (int(part) for part in found["node"].lstrip("v").split(".")[:2])
    if (major, minor) < (22, 5):
        pytest.fail(f"Squad needs Node 22.5 or later; {found['node']} is installed", pytrace=False)
    yield found


@pytest.fixture(autouse=True)
def _squad_installed(squad_program: dict[str, str]) -> None:
    """Every interop test runs the real Squad."""


@pytest.fixture
def data_dir(tmp_path_factory: pytest.TempPathFactory, settings: Any) -> Path:
    """Canon's data directory (its backups), one per test."""
    folder = tmp_path_factory.mktemp("canon-data")
    settings.CANON_DATA_DIR = folder
    return folder


def new_repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tidepool")
    subprocess.run(["git", "init", "--quiet", str(root)], check=True)
    return root


@pytest.fixture
def fresh_team(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository where `squad init` just created the team (agents Rai, Ralph and Scribe)."""
    root = new_repository(tmp_path_factory)
    squad.init(root)
    return root


@pytest.fixture
def cast_team(fresh_team: Path) -> Path:
    """A fresh team Squad's casting then filled: Marlow and Juno, and casting's own `agents/rai/` beside
    the `agents/Rai/` that `squad init` made."""
    squad.cast(fresh_team, PROJECT, MEMBERS)
    return fresh_team


@pytest.fixture
def workspace(project: Project, fresh_team: Path, data_dir: Path) -> Project:
    """The project mirroring the fresh team, before Canon first read it."""
    return mirrored(project, fresh_team)


@pytest.fixture
def adopted(workspace: Project) -> Project:
    """The project after its first sync: a coordinator's adoption of the team's files."""
    sync(workspace)
    return workspace
