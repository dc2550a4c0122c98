"""The post-run Scribe (docs/ledger.md): after a run, merge low-risk learnings, leave decisions for review.

In one transaction it merges the agent's pending `learning` / `pattern` / `update` entries created by
the run (`run_id` equal to the run, or, for entries without a run id, created at or after the run's
start), leaves the run's pending decision-type entries pending and returns them as `needs_review`,
and appends `Run {run_id} by {agent} {outcome}.` to the open session's summary. The coordinator
backstop: when the run's agent is the project's coordinator agent and the run was approved, its own
pending `architectural` and `scope` entries are merged too. Running it again merges nothing new (the
summary line is not appended twice either). A run racing another for the same entries (on PostgreSQL,
where they overlap) is refused whole with a retryable 409 when it finds an entry already decided; the
retry merges nothing new. The mirror is exported afterwards, best effort.

A run that has no episode gets a minimal one, written by the Scribe (docs/ledger.md "Episodes"): its
outcome read from `outcome`, and what the run proposed and merged as what it tried. A run's own episode
is never overwritten.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.db import transaction
from django.db.models import Q

from ledger import services
from ledger.models import (
    BOUNDARY_TYPES,
    Agent,
    EntryStatus,
    EntryType,
    Episode,
    EpisodeOutcome,
    EpisodeSource,
    InboxEntry,
    Project,
    Session,
    Source,
)
from ledger.values import InvalidValue, agent_key, check_text

MEMORY_TYPES = (EntryType.LEARNING, EntryType.PATTERN, EntryType.UPDATE)
OUTCOME_MAX_LENGTH = 40
# The Scribe's `outcome` words that name an episode's outcome; any other word is `abandoned`.
EPISODE_OUTCOMES = {
    "completed": EpisodeOutcome.SUCCEEDED,
    "succeeded": EpisodeOutcome.SUCCEEDED,
    "failed": EpisodeOutcome.FAILED,
}
# How many slugs the minimal episode names in each of its lists before counting the rest.
EPISODE_SLUGS_SHOWN = 20


@dataclass
class ScribeResult:
    merged: list[InboxEntry] = field(default_factory=list)
    needs_review: list[InboxEntry] = field(default_factory=list)
    summary_line: str = ""
    summary_appended: bool = False
    # The minimal episode this run wrote, when the run had none.
    episode: Episode | None = None

    def as_dict(self) -> dict[str, Any]:
        def brief(entry: InboxEntry) -> dict[str, Any]:
            return {
                "id": entry.pk,
                "slug": entry.slug,
                "type": entry.type,
                "title": entry.title,
                "status": entry.status,
                "decision_id": entry.decision_id,
                "memory_id": entry.memory_id,
            }

        return {
            "merged": [brief(e) for e in self.merged],
            "needs_review": [brief(e) for e in self.needs_review],
            "summary_line": self.summary_line,
            "summary_appended": self.summary_appended,
            "episode_id": self.episode.pk if self.episode is not None else None,
        }


def scribe_run(
    *,
    project: Project,
    agent_name: str,
    run_id: str,
    started_at: datetime,
    outcome: str = "completed",
    approved: bool = False,
    by: str = "scribe",
    via: str = "scribe",
) -> ScribeResult:
    try:
        key = agent_key(agent_name)
    except InvalidValue as exc:
        raise services.invalid("agent_name", str(exc)) from exc
    run_id = run_id.strip()
    if not run_id or len(run_id) > services.RUN_ID_MAX_LENGTH:
        raise services.invalid("run_id", f"must be 1-{services.RUN_ID_MAX_LENGTH} characters")
    if started_at.tzinfo is None:
        raise services.invalid("started_at", "give a time zone (for example 2026-11-22T08:00:00Z)")
    try:
        # Compared in UTC: a far offset near year 1 or 9999 leaves the calendar here, not in the query.
        started_at = started_at.astimezone(UTC)
    except OverflowError:
        raise services.invalid("started_at", "out of range once converted to UTC") from None
    outcome = " ".join(outcome.split()) or "completed"
    if len(outcome) > OUTCOME_MAX_LENGTH:
        raise services.invalid("outcome", f"at most {OUTCOME_MAX_LENGTH} characters")
    for name, text in (("run_id", run_id), ("outcome", outcome)):
        try:
            check_text(text)
        except InvalidValue as exc:
            raise services.invalid(name, str(exc)) from exc

    of_this_run = Q(run_id=run_id) | Q(run_id="", created_at__gte=started_at)
    result = ScribeResult(summary_line=f"Run {run_id} by {agent_name.strip()} {outcome}.")
    with transaction.atomic():
        pending = list(
            InboxEntry.objects.filter(project=project, agent__key=key, status=EntryStatus.PENDING)
            .filter(of_this_run)
            .order_by("created_at", "id")
        )
        backstop = approved and key == agent_key(project.coordinator_agent)
        for entry in pending:
            # An entry that came from a file speaks with no one's voice: a person merges it.
            if entry.source == Source.IMPORT:
                result.needs_review.append(entry)
            elif entry.type in MEMORY_TYPES or (backstop and entry.type in BOUNDARY_TYPES):
                try:
                    merged = services.entry_merge(project=project, entry_id=entry.pk, by=by, via=via)
                except services.Conflict as exc:
                    # Decided since it was listed: another run of the Scribe (or a person) got there
                    # first. This run keeps nothing; run again and it merges what is left.
                    raise services.Conflict(
                        f"entry {entry.slug!r} was decided by a concurrent request; retry", retryable=True
                    ) from exc
                result.merged.append(merged)
            else:
                result.needs_review.append(entry)
        session = Session.objects.select_for_update().filter(project=project, ended_at__isnull=True).first()
        if session is not None and result.summary_line not in session.summary.splitlines():
            services.session_update_current(project=project, summary_append=result.summary_line)
            result.summary_appended = True
        result.episode = _minimal_episode(project, key, run_id, outcome, pending, result, by=by, via=via)
    return result


def episode_outcome(outcome: str) -> str:
    """The episode outcome the Scribe's `outcome` text names: completed or succeeded, failed, or else
    abandoned."""
    return EPISODE_OUTCOMES.get(outcome.casefold(), EpisodeOutcome.ABANDONED)


def _slugs(entries: list[InboxEntry]) -> str:
    shown = ", ".join(entry.slug for entry in entries[:EPISODE_SLUGS_SHOWN])
    more = len(entries) - EPISODE_SLUGS_SHOWN
    return f"{shown} and {more} more" if more > 0 else shown


def tried_text(run_id: str, pending: list[InboxEntry], result: ScribeResult) -> str:
    """What a run tried, as far as the Scribe knows: what it proposed, merged and left for review."""
    if not pending:
        return f"Run {run_id} proposed nothing to the inbox."
    lines = [f"Run {run_id} proposed {len(pending)} inbox entries."]
    if result.merged:
        lines.append(f"Merged: {_slugs(result.merged)}.")
    if result.needs_review:
        lines.append(f"Left for review: {_slugs(result.needs_review)}.")
    return "\n".join(lines)


def _minimal_episode(
    project: Project,
    key: str,
    run_id: str,
    outcome: str,
    pending: list[InboxEntry],
    result: ScribeResult,
    *,
    by: str,
    via: str,
) -> Episode | None:
    """The Scribe's episode of a run that has none (of an agent the project knows); None when the run
    has one already, which the Scribe never replaces."""
    agent = Agent.objects.filter(project=project, key=key).first()
    if agent is None:
        return None
    recorded = services.episode_record(
        project=project,
        agent_name=agent.name,
        agent=agent,
        run_id=run_id,
        outcome=episode_outcome(outcome),
        tried=tried_text(run_id, pending, result),
        source=EpisodeSource.SCRIBE,
        by=by,
        via=via,
    )
    return recorded.episode if recorded.created else None
