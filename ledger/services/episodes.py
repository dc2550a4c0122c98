"""Episodes: what an agent's run tried and how it ended, recorded once per run and kept whatever the
outcome (docs/ledger.md "Episodes")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import IntegrityError, transaction

from ledger.models import Agent, Episode, EpisodeOutcome, EpisodeSource, Project
from ledger.services.effects import audit
from ledger.services.errors import Conflict, invalid
from ledger.services.fields import (
    RUN_ID_MAX_LENGTH,
    SUBMIT_ATTEMPTS,
    checked_agent_name,
    checked_choice,
    checked_text,
    locked,
)
from ledger.services.projects import agent_get_or_create
from ledger.tokens import count_tokens
from ledger.values import InvalidValue, check_text

# Each of tried, difficulties and feedback; a run's notes, not its logs.
EPISODE_TEXT_MAX_LENGTH = 20_000
EPISODE_FILES_MAX = 500
EPISODE_PATH_MAX_LENGTH = 500
CHANGE_URL_MAX_LENGTH = 2048
_HTTP_URL = URLValidator(schemes=["http", "https"])
# The fields a report of a run writes; the rest (who, which run, when) stay as first recorded.
REPORTED = ("outcome", "tried", "files", "change_url", "difficulties", "feedback", "source", "tokens")


@dataclass
class EpisodeResult:
    episode: Episode
    created: bool
    # False when the report left the episode as it was: the same report again, or the Scribe's
    # minimal one for a run that already had an episode.
    changed: bool


def checked_files(value: object) -> list[str]:
    """`files`: a list of at most `EPISODE_FILES_MAX` paths, each a non-blank string, kept once each."""
    if value is None:
        return []
    if not isinstance(value, list | tuple) or not all(isinstance(item, str) for item in value):
        raise invalid("files", "must be a list of strings")
    if len(value) > EPISODE_FILES_MAX:
        raise invalid("files", f"must hold at most {EPISODE_FILES_MAX} paths, got {len(value)}")
    paths: dict[str, None] = {}
    for item in value:
        try:
            check_text(item, "each path")
        except InvalidValue as exc:
            raise invalid("files", str(exc)) from exc
        path = item.strip()
        if len(path) > EPISODE_PATH_MAX_LENGTH:
            raise invalid("files", f"each path must be at most {EPISODE_PATH_MAX_LENGTH} characters")
        if path:
            paths[path] = None
    return list(paths)


def checked_change_url(value: object) -> str:
    """`change_url`: blank, or an http(s) link with a host."""
    url = checked_text("change_url", value, max_length=CHANGE_URL_MAX_LENGTH).strip()
    if not url:
        return ""
    try:
        _HTTP_URL(url)
    except ValidationError:
        raise invalid("change_url", "must be an http:// or https:// link") from None
    return url


def episode_tokens(fields: dict[str, Any]) -> int:
    text = "\n".join([fields["tried"], fields["difficulties"], fields["feedback"], *fields["files"]])
    return count_tokens(text)


def episode_record(
    *,
    project: Project,
    agent_name: str,
    run_id: str,
    outcome: str,
    tried: str,
    files: list[str] | None = None,
    change_url: str = "",
    difficulties: str = "",
    feedback: str = "",
    source: str = EpisodeSource.AGENT,
    by: str = "",
    via: str = "api",
    agent: Agent | None = None,
) -> EpisodeResult:
    """Record what agent `agent_name` tried in run `run_id` and how it ended.

    One episode per run of an agent: a second report of the same run replaces the first one's fields
    (a retry is idempotent), whatever its outcome. The Scribe's minimal episode (`source` scribe) is
    written only for a run that has none, and any other report of the run replaces it. `agent` is
    the agent's row when the caller holds it already.
    """
    name = checked_agent_name(agent_name)
    fields: dict[str, Any] = {
        "outcome": checked_choice("outcome", outcome, EpisodeOutcome.values),
        "tried": checked_text("tried", tried, required=True, max_length=EPISODE_TEXT_MAX_LENGTH).strip(),
        "files": checked_files(files),
        "change_url": checked_change_url(change_url),
        "difficulties": checked_text(
            "difficulties", difficulties, max_length=EPISODE_TEXT_MAX_LENGTH
        ).strip(),
        "feedback": checked_text("feedback", feedback, max_length=EPISODE_TEXT_MAX_LENGTH).strip(),
        "source": checked_choice("source", source, EpisodeSource.values),
    }
    run = checked_text("run_id", run_id, required=True, max_length=RUN_ID_MAX_LENGTH).strip()
    fields["tokens"] = episode_tokens(fields)
    actor = by or name
    for _attempt in range(SUBMIT_ATTEMPTS):
        with transaction.atomic():
            agent = agent_get_or_create(project=project, name=name, known=agent)
            existing = locked(Episode.objects.filter(project=project, agent=agent, run_id=run)).first()
            if existing is None:
                try:
                    with transaction.atomic():
                        episode = Episode.objects.create(project=project, agent=agent, run_id=run, **fields)
                except IntegrityError:
                    continue  # another report of this run was stored first: update it instead
                audit(
                    project=project,
                    actor=actor,
                    via=via,
                    action="record",
                    obj=episode,
                    to_state=episode.outcome,
                )
                return EpisodeResult(episode=episode, created=True, changed=True)
            return _report_again(project, existing, fields, actor=actor, via=via)
    raise Conflict(f"run {run!r} is being reported concurrently; retry", retryable=True)


def _report_again(
    project: Project, episode: Episode, fields: dict[str, Any], *, actor: str, via: str
) -> EpisodeResult:
    """A second report of a run: it replaces the first, except that the Scribe writes only for a run
    that has no episode, and never replaces one (its own included)."""
    if fields["source"] == EpisodeSource.SCRIBE:
        return EpisodeResult(episode=episode, created=False, changed=False)
    changes = {key: value for key, value in fields.items() if getattr(episode, key) != value}
    if not changes:
        return EpisodeResult(episode=episode, created=False, changed=False)
    before = episode.outcome
    replaced = episode.source == EpisodeSource.SCRIBE and fields["source"] != EpisodeSource.SCRIBE
    for key, value in changes.items():
        setattr(episode, key, value)
    episode.save(update_fields=[*changes, "updated_at"])
    audit(
        project=project,
        actor=actor,
        via=via,
        action="replace" if replaced else "edit",
        obj=episode,
        from_state=before,
        to_state=episode.outcome,
        detail={"fields": sorted(changes)},
    )
    return EpisodeResult(episode=episode, created=False, changed=True)
