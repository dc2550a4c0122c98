"""The file mirror: the last import and export, file by file, and buttons to run either now
(docs/mirror.md)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from ledger import mirror
from ledger.models import MirrorKind, MirrorRun
from review.access import project_for_user
from review.views.base import HtmxHttpRequest, project_context

# The mirror page lists this many recent import and export runs.
EARLIER_RUNS = 20


@require_GET
@login_required
def mirror_page(request: HtmxHttpRequest, project: str) -> HttpResponse:
    access = project_for_user(request, project)
    project_runs = MirrorRun.objects.filter(project=access.project).order_by("-created_at", "-id")
    runs = {kind: project_runs.filter(kind=kind).first() for kind in MirrorKind.values}
    shown = [r.pk for r in runs.values() if r is not None]
    earlier = project_runs.exclude(pk__in=shown)[:EARLIER_RUNS]
    return render(
        request, "review/mirror.html", project_context(access, nav="mirror", runs=runs, earlier=earlier)
    )


def _mirror_action(request: HtmxHttpRequest, project: str, kind: str) -> HttpResponse:
    access = project_for_user(request, project, act=True)
    result = mirror.run_and_record(
        access.project, kind, trigger="dashboard", actor=request.user.get_username()
    )
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
