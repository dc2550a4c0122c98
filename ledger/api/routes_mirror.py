"""The Scribe and the mirror over HTTP (docs/ledger.md, docs/mirror.md).

A failed export answers 503 with the report (`ok: false` and the error), never a 500; an export that
wrote most files but had errors for some paths answers 200 with `ok: false` and those errors.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import HttpRequest
from ninja import Status
from pydantic import Field, StrictBool, StrictStr

from ledger import mirror
from ledger.api.base import Caller, api, project_caller
from ledger.api.routes_inbox import WRITE_ERRORS
from ledger.api.shapes import AGENT_NAME, NOT_BLANK, In, stated
from ledger.models import MirrorKind
from ledger.scribe import OUTCOME_MAX_LENGTH, scribe_run
from ledger.services import RUN_ID_MAX_LENGTH, invalid


class ScribeIn(In):
    agent_name: StrictStr | None = Field(None, json_schema_extra=stated(**AGENT_NAME))
    run_id: StrictStr = Field(
        json_schema_extra=stated(minLength=1, maxLength=RUN_ID_MAX_LENGTH, pattern=NOT_BLANK)
    )
    started_at: StrictStr = Field(json_schema_extra={"format": "date-time"})
    outcome: StrictStr = Field("completed", json_schema_extra=stated(maxLength=OUTCOME_MAX_LENGTH))
    approved: StrictBool = False


@api.post("/projects/{project}/scribe", response={200: dict[str, Any], **WRITE_ERRORS}, tags=["scribe"])
def run_scribe(request: HttpRequest, project: str, payload: ScribeIn) -> dict[str, Any]:
    """After a run: merge its learnings, list its decisions for review, note it in the session."""
    caller = project_caller(request, project)
    return scribe_run_as(caller, payload)


def scribe_run_as(caller: Caller, payload: ScribeIn, via: str = "api") -> dict[str, Any]:
    """Run the Scribe for the agent `payload` names (an agent token: itself by default) as `caller`."""
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
        via=via,
    )
    return result.as_dict()


def _mirror(request: HttpRequest, project: str, kind: str) -> Status:
    caller = project_caller(request, project, coordinator=True)
    result = mirror_run_as(caller, kind)
    return Status(200 if result.report is not None else 503, result.as_dict())


def mirror_run_as(caller: Caller, kind: str, trigger: str = "api") -> mirror.MirrorResult:
    """Export or import the project's workspace now; a coordinator's act only."""
    caller.require_coordinator()
    return mirror.run_and_record(caller.project, kind, trigger=trigger, actor=caller.name)


# 503 with the report when the mirror could not run at all.
MIRROR_ANSWERS: dict[int, Any] = {200: dict[str, Any], 503: dict[str, Any], **WRITE_ERRORS}


@api.post("/projects/{project}/memory/export", response=MIRROR_ANSWERS, tags=["mirror"])
def export_mirror(request: HttpRequest, project: str) -> Status:
    """Write the files Canon owns in the workspace now; per file: written, kept, backed up."""
    return _mirror(request, project, MirrorKind.EXPORT)


@api.post("/projects/{project}/memory/import", response=MIRROR_ANSWERS, tags=["mirror"])
def import_mirror(request: HttpRequest, project: str) -> Status:
    """Adopt the team's files now (decision log, inbox, histories, now.md); report per file what happened."""
    return _mirror(request, project, MirrorKind.IMPORT)
