"""The Scribe and the mirror over HTTP (docs/ledger.md, docs/mirror.md).

A failed export answers 503 with the report (`ok: false` and the error), never a 500; an export that
wrote most files but had errors for some paths answers 200 with `ok: false` and those errors.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Status

from ledger.actions.mirror import mirror_run_as, scribe_run_as
from ledger.actions.shapes import ScribeIn
from ledger.api.base import api, project_caller
from ledger.api.routes_inbox import WRITE_ERRORS
from ledger.models import MirrorKind


@api.post("/projects/{project}/scribe", response={200: dict[str, Any], **WRITE_ERRORS}, tags=["scribe"])
def run_scribe(request: HttpRequest, project: str, payload: ScribeIn) -> dict[str, Any]:
    """After a run: merge its learnings, list its decisions for review, note it in the session."""
    caller = project_caller(request, project)
    return scribe_run_as(caller, payload)


def _mirror(request: HttpRequest, project: str, kind: str) -> Status:
    caller = project_caller(request, project, coordinator=True)
    result = mirror_run_as(caller, kind)
    return Status(200 if result.report is not None else 503, result.as_dict())


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
