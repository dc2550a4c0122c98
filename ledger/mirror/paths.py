"""Where the mirror's files live in a workspace.

A team keeps its files in `.squad/`, or in the older `.ai-team/` with the same layout. Canon uses the
folder the team already has (`.squad/` when both exist) and creates `.squad/` only when neither does.
"""

from __future__ import annotations

from dataclasses import dataclass

from ledger.mirror.fs import Workspace

SQUAD = ".squad"
OLD_SQUAD = ".ai-team"
BOUNDARIES = ".agentweaver/context/boundaries.md"
PATTERNS = ".agentweaver/context/patterns.md"
# Where the first release kept its manifest; read once, then the database keeps it.
LEGACY_MANIFEST = ".squad/.canon-manifest.json"


@dataclass(frozen=True)
class Layout:
    team: str

    @classmethod
    def of(cls, workspace: Workspace) -> Layout:
        if workspace.kind(SQUAD) == "absent" and workspace.kind(OLD_SQUAD) == "dir":
            return cls(team=OLD_SQUAD)
        return cls(team=SQUAD)

    @property
    def decisions(self) -> str:
        return f"{self.team}/decisions.md"

    @property
    def decisions_archive(self) -> str:
        """Where Squad's `nap` moves blocks older than 30 days once the log passes 20 KB."""
        return f"{self.team}/decisions-archive.md"

    @property
    def inbox(self) -> str:
        return f"{self.team}/decisions/inbox"

    @property
    def agents(self) -> str:
        return f"{self.team}/agents"

    @property
    def now(self) -> str:
        return f"{self.team}/identity/now.md"

    def inbox_file(self, name: str) -> str:
        return f"{self.inbox}/{name}"

    def history(self, folder: str) -> str:
        return f"{self.agents}/{folder}/history.md"

    def history_archive(self, folder: str) -> str:
        """Where Squad's `nap` moves the older sections of a history over 15 KB."""
        return f"{self.agents}/{folder}/history-archive.md"

    def folders_written(self) -> list[str]:
        """The folders Canon writes files into (where a crash may have left a temporary file)."""
        return [self.team, self.inbox, f"{self.team}/identity", ".agentweaver/context"]
