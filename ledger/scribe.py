"""The post-run Scribe (docs/ledger.md): after a run, merge low-risk learnings, leave decisions for review.

In one transaction it merges the agent's pending `learning` / `pattern` / `update` entries created by
the run (`run_id` equal to the run, or, for entries without a run id, created during the run as the
server saw it), leaves the run's other pending entries pending and returns them as `needs_review`,
and appends `Run {run_id} by {agent} {outcome}.` to the open session's summary.

The Scribe acts without a person, so it merges only what reaches nobody but the run's own agent
(`ledger.visibility.scribe_refusal`): never an entry tagged `cross-team`, never one whose source is not
that agent (a file, a notes file, a coordinator's token), never one whose text a reviewer would be
warned about. The coordinator backstop: when a coordinator token runs it for the project's coordinator
agent and says the run was approved, that agent's pending `architectural` and `scope` entries are
merged too (a person acted). Running it again merges nothing new (the summary line is not appended
twice either). A run racing another for the same entries (on PostgreSQL, where they overlap) is refused
whole with a retryable 409 when it finds an entry already decided; the retry merges nothing new. The
mirror is exported afterwards, best effort.

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

from ledger import services, visibility
from ledger.models import (
    Agent,
    EntryStatus,
    Episode,
    EpisodeOutcome,
    EpisodeSource,
    InboxEntry,
    Project,
    Session,
    Source,
)
from ledger.values import InvalidValue, agent_key, check_text

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
    # Why each entry in `needs_review` waits for a person.
    reasons: dict[int, str] = field(default_factory=dict)
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
            "needs_review": [{**brief(e), "reason": self.reasons.get(e.pk, "")} for e in self.needs_review],
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
    coordinator: bool = False,
    by: str = "scribe",
    via: str = "scribe",
) -> ScribeResult:
    """Run the Scribe for `agent_name`'s run. `coordinator` says a person runs it (a coordinator token,
    the dashboard, an operator's command): only then does `approved` mean anything."""
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

    result = ScribeResult(summary_line=f"Run {run_id} by {agent_name.strip()} {outcome}.")
    with transaction.atomic():
        since = visibility.run_started(project, key, run_id, started_at)
        of_this_run = Q(run_id=run_id) | Q(run_id="", created_at__gte=since)
        pending = list(
            InboxEntry.objects.filter(project=project, agent__key=key, status=EntryStatus.PENDING)
            .filter(of_this_run)
            .order_by("created_at", "id")
        )
        backstop = coordinator and approved and key == agent_key(project.coordinator_agent)
        for entry in pending:
            reason = visibility.scribe_refusal(entry, key, backstop=backstop)
            if reason is not None:
                result.needs_review.append(entry)
                result.reasons[entry.pk] = reason
            else:
                try:
                    merged = services.entry_merge(project=project, entry_id=entry.pk, by=by, via=via)
                except (services.FlaggedEntry, services.CompetingBoundary) as exc:
                    # A reviewer's choice is needed (a competing boundary, a flagged text): a person's.
                    result.needs_review.append(entry)
                    result.reasons[entry.pk] = exc.message
                    continue
                except services.Conflict as exc:
                    # Decided since it was listed: another run of the Scribe (or a person) got there
                    # first. This run keeps nothing; run again and it merges what is left.
                    raise services.Conflict(
                        f"entry {entry.slug!r} was decided by a concurrent request; retry", retryable=True
                    ) from exc
                result.merged.append(merged)
        session = Session.objects.select_for_update().filter(project=project, ended_at__isnull=True).first()
        if session is not None and result.summary_line not in session.summary.splitlines():
            services.session_update_current(project=project, summary_append=result.summary_line, by=by)
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


# Entries written through a token: the agent's own, or a coordinator's for it. An entry a file brought
# in (`import`, `notes`) was written by whoever could write the workspace, so its slug is not the run's
# to tell.
VOICED = (Source.AGENT, Source.COORDINATOR)


def tried_text(run_id: str, pending: list[InboxEntry], result: ScribeResult) -> str:
    """What a run tried, as far as the Scribe knows: what it proposed, merged and left for review,
    through a token (the episode reaches the agent's context: no file's words go into it)."""
    pending = [entry for entry in pending if entry.source in VOICED]
    if not pending:
        return f"Run {run_id} proposed nothing to the inbox."
    lines = [f"Run {run_id} proposed {len(pending)} inbox entries."]
    merged = [entry for entry in result.merged if entry.source in VOICED]
    review = [entry for entry in result.needs_review if entry.source in VOICED]
    if merged:
        lines.append(f"Merged: {_slugs(merged)}.")
    if review:
        lines.append(f"Left for review: {_slugs(review)}.")
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
