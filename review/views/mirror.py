"""The file mirror: the last import and export, file by file, the runs before them, and buttons to run
either now (docs/mirror.md)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from ledger.actions.mirror import mirror_run_as
from ledger.models import MirrorKind, MirrorRun, Project
from review.access import project_for_user
from review.views.base import HtmxHttpRequest, project_context

# The mirror page lists this many lines of earlier runs, a line being one run or a series of
# background runs in a row.
EARLIER_RUNS = 20
# How far back the earlier runs are read to count the series: the exports after every write make
# hundreds of background runs a day.
RUNS_READ = 1000
BACKGROUND = "background"


@dataclass(frozen=True)
class RunLine:
    """One line of the earlier runs: `run`, and for a series of background runs in a row of the same
    kind and outcome, how many came before it (`more`) and when the first of them ran (`since`)."""

    run: MirrorRun
    more: int = 0
    since: datetime | None = None


def earlier_runs(project: Project, shown: list[int]) -> list[RunLine]:
    """The runs before those `shown` (the last import and export), newest first, at most
    `EARLIER_RUNS` lines: background runs in a row that share their kind and outcome are one line,
    the newest with the count of the others. A run a person started, or one that failed where the
    others succeeded, is a line of its own. Two queries: the newest `RUNS_READ` runs' kinds and
    outcomes, then the lines' runs."""
    recent = (
        MirrorRun.objects.filter(project=project)
        .exclude(pk__in=shown)
        .order_by("-created_at", "-id")
        .values_list("pk", "kind", "trigger", "ok", "created_at")[:RUNS_READ]
    )
    lines: list[tuple[int, tuple[str, str, bool], int, datetime | None]] = []
    for pk, kind, trigger, ok, created_at in recent:
        key = (kind, trigger, ok)
        if lines and trigger == BACKGROUND and lines[-1][1] == key:
            head, _, more, _ = lines[-1]
            lines[-1] = (head, key, more + 1, created_at)
        elif len(lines) == EARLIER_RUNS:
            break
        else:
            lines.append((pk, key, 0, None))
    runs = MirrorRun.objects.in_bulk([pk for pk, *_ in lines])
    return [RunLine(runs[pk], more, since) for pk, _, more, since in lines]


@require_GET
@login_required
def mirror_page(request: HtmxHttpRequest, project: str) -> HttpResponse:
    access = project_for_user(request, project)
    project_runs = MirrorRun.objects.filter(project=access.project).order_by("-created_at", "-id")
    runs = {kind: project_runs.filter(kind=kind).first() for kind in MirrorKind.values}
    shown = [r.pk for r in runs.values() if r is not None]
    earlier = earlier_runs(access.project, shown)
    return render(
        request, "review/mirror.html", project_context(access, nav="mirror", runs=runs, earlier=earlier)
    )


def _mirror_action(request: HtmxHttpRequest, project: str, kind: str) -> HttpResponse:
    access = project_for_user(request, project, act=True)
    result = mirror_run_as(access.caller, kind)
    if result.ok:
        messages.success(request, result.summary())
    else:
        messages.error(request, result.summary())
    return redirect("review:mirror", access.project.slug)


@require_POST
@login_required
def mirror_import(request: HtmxHttpRequest, project: str) -> HttpResponse:
    return _mirror_action(request, project, MirrorKind.IMPORT)


@require_POST
@login_required
def mirror_export(request: HtmxHttpRequest, project: str) -> HttpResponse:
    return _mirror_action(request, project, MirrorKind.EXPORT)
