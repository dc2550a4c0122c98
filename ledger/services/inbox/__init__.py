"""Proposals: submitted by agents (never overwriting another's), imported from files, and decided
by a coordinator, who merges one into a decision or a memory, or rejects it, may undo that for a short
while, and may settle competing proposals in one step.

- `submission`: a proposal submitted by an agent, shared as a memory, or imported from a file;
- `review`: the verdict every merge and rejection ends with, and a rejection;
- `merge`: a merge into a decision or a memory, and what refuses one until the reviewer chooses;
- `files`: an entry whose file in the team's inbox someone else merged, or that gives its file up;
- `undo`: a merge or a rejection taken back.

`ledger.services` names what the rest of Canon calls; the names below are imported from here too.
"""

from __future__ import annotations

from ledger.services.inbox.merge import VERSION_LENGTH, entry_version

__all__ = ["VERSION_LENGTH", "entry_version"]
