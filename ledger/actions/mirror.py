"""The Scribe after a run, and the workspace mirror now (docs/ledger.md, docs/mirror.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ledger import mirror
from ledger.actions.frame import Caller
from ledger.actions.shapes import ScribeIn
from ledger.scribe import scribe_run
from ledger.services import invalid


def scribe_run_as(caller: Caller, payload: ScribeIn, via: str | None = None) -> dict[str, Any]:
    """Run the Scribe for the agent `payload` names (an agent: itself by default) as `caller`."""
    agent_name = caller.agent_named(
        payload.agent_name, "a coordinator token must say which agent's run this was"
    )
    try:
        started_at = datetime.fromisoformat(payload.started_at.replace("Z", "+00:00"))
    except ValueError:
        raise invalid("started_at", "not an ISO 8601 time such as 2026-11-22T08:00:00Z") from None
    result = scribe_run(
        project=caller.project,
        agent_name=agent_name,
        run_id=payload.run_id,
        started_at=started_at,
        outcome=payload.outcome,
        approved=payload.approved,
        coordinator=caller.is_coordinator,
        by=caller.name,
        via=via or caller.via,
    )
    return result.as_dict()


def mirror_run_as(caller: Caller, kind: str, trigger: str | None = None) -> mirror.MirrorResult:
    """Export or import the project's workspace now; a coordinator's act only."""
    caller.require_coordinator()
    return mirror.run_and_record(caller.project, kind, trigger=trigger or caller.via, actor=caller.name)
