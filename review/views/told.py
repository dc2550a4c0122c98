"""What agents were told: every compiled context an agent asked for with a run id, and each one's
exact text with what it included (docs/dashboard.md)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from ledger import selectors
from ledger.models import Compilation
from review.access import in_project, project_for_user
from review.forms import CompilationFilterForm
from review.views.base import HtmxHttpRequest, paginate, project_context, render_list


@require_GET
@login_required
def compilation_list(request: HtmxHttpRequest, project: str) -> HttpResponse:
    access = project_for_user(request, project)
    rows = Compilation.objects.filter(project=access.project).select_related("agent").defer("text")
    form = CompilationFilterForm(request.GET)
    wanted = form.cleaned_data if form.is_valid() else {"agent": "", "run": ""}
    if wanted["agent"]:
        rows = rows.filter(agent__key=selectors.agent_filter_key(wanted["agent"]))
    if wanted["run"]:
        rows = rows.filter(run_id=wanted["run"])
    context = project_context(
        access,
        nav="compilations",
        form=form,
        page=paginate(rows, request.GET.get("page")),
        params=request.GET,
        filtered=bool(wanted["agent"] or wanted["run"]),
    )
    return render_list(request, "review/compilations.html", "compilation-list", context)


@require_GET
@login_required
def compilation_page(request: HtmxHttpRequest, project: str, compilation_id: int) -> HttpResponse:
    access = project_for_user(request, project)
    compilation = in_project(access, Compilation.objects.select_related("agent", "session"), compilation_id)
    return render(
        request,
        "review/compilation.html",
        project_context(
            access,
            nav="compilations",
            compilation=compilation,
            decisions=compilation.decisions.order_by("created_at", "id"),
            memories=compilation.memories.select_related("agent"),
        ),
    )
