"""Every write to the ledger, and the rules it must keep.

Views, the API, commands and the importer parse their input and call one of these functions. Each is
atomic, takes keyword-only arguments and raises a `LedgerError` whose message is safe to show to
whoever sent the request; what that error means to an HTTP client or a shell is decided where the
request came in. Races are decided by the database: unique constraints caught around a savepoint,
and compare-and-set updates whose row count is checked.

- `errors`: what a refused write raises; `fields`: the checks every input passes;
- `effects`: what every write leaves behind (its audit event, the note that files are stale);
- `projects`: projects, agents and tokens; `inbox`: proposals and their review;
- `revisions`: a proposal's text edited by a coordinator before it is merged;
- `decisions`, `memory`, `sessions`: the ledger's rows; `adoption`: a team's own files taken in;
- `compilations`: the record of what an agent was told; `episodes`: what a run tried and how it ended;
- `notes`: a workspace's notes files, indexed as memories or proposed for review.
"""

from __future__ import annotations

from ledger.services.adoption import (
    Adopted,
    adopted_agent_name,
    decisions_adopt,
    decisions_archived_outside,
    memories_adopt,
    memories_archived_outside,
    memories_edited_outside,
)
from ledger.services.compilations import compilation_record, compilations_prune
from ledger.services.decisions import (
    decision_archive,
    decision_create,
    decision_edit,
    decision_supersede,
    decision_update,
    decisions_retype,
)
from ledger.services.episodes import EpisodeResult, episode_record
from ledger.services.errors import Conflict, Invalid, LedgerError, NotFound, invalid
from ledger.services.fields import (
    IMPORTANCE_RANK,
    MAX_ID,
    RUN_ID_MAX_LENGTH,
    SESSION_ID_MAX_LENGTH,
    TITLE_MAX_LENGTH,
    content_sha256,
)
from ledger.services.inbox.files import entry_file_release, entry_file_text_keep, entry_merged_outside
from ledger.services.inbox.merge import (
    ChangedSinceRead,
    CompetingBoundary,
    FlaggedEntry,
    Merged,
    entry_flags,
    entry_merge,
    entry_merge_outcome,
    entry_resolve,
    entry_version,
)
from ledger.services.inbox.review import entry_reject
from ledger.services.inbox.submission import SubmitResult, entry_import, entry_submit, memory_propose
from ledger.services.inbox.undo import entry_undo
from ledger.services.memory import (
    MemoryRecorded,
    memory_archive,
    memory_dismiss_similar,
    memory_edit,
    memory_merge,
    memory_record,
    memory_store,
)
from ledger.services.notes import (
    FILE_CHANGED,
    FILE_REMOVED,
    NOTES_VIA,
    NoteVersion,
    note_file,
    note_index,
    note_merged_supersede,
    note_path,
    note_propose,
    note_withdraw,
    notes_retire,
)
from ledger.services.projects import agent_get_or_create, project_create_or_update, token_issue
from ledger.services.revisions import entry_edit
from ledger.services.sessions import UNSET, session_start, session_update_current

__all__ = [
    "FILE_CHANGED",
    "FILE_REMOVED",
    "IMPORTANCE_RANK",
    "MAX_ID",
    "NOTES_VIA",
    "RUN_ID_MAX_LENGTH",
    "SESSION_ID_MAX_LENGTH",
    "TITLE_MAX_LENGTH",
    "UNSET",
    "Adopted",
    "ChangedSinceRead",
    "CompetingBoundary",
    "Conflict",
    "EpisodeResult",
    "FlaggedEntry",
    "Invalid",
    "LedgerError",
    "MemoryRecorded",
    "Merged",
    "NotFound",
    "NoteVersion",
    "SubmitResult",
    "adopted_agent_name",
    "agent_get_or_create",
    "compilation_record",
    "compilations_prune",
    "content_sha256",
    "decision_archive",
    "decision_create",
    "decision_edit",
    "decision_supersede",
    "decision_update",
    "decisions_adopt",
    "decisions_archived_outside",
    "decisions_retype",
    "entry_edit",
    "entry_file_release",
    "entry_file_text_keep",
    "entry_flags",
    "entry_import",
    "entry_merge",
    "entry_merge_outcome",
    "entry_merged_outside",
    "entry_reject",
    "entry_resolve",
    "entry_submit",
    "entry_undo",
    "entry_version",
    "episode_record",
    "invalid",
    "memories_adopt",
    "memories_archived_outside",
    "memories_edited_outside",
    "memory_archive",
    "memory_dismiss_similar",
    "memory_edit",
    "memory_merge",
    "memory_propose",
    "memory_record",
    "memory_store",
    "note_file",
    "note_index",
    "note_merged_supersede",
    "note_path",
    "note_propose",
    "note_withdraw",
    "notes_retire",
    "project_create_or_update",
    "session_start",
    "session_update_current",
    "token_issue",
]
