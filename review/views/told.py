"""What agents were told: every compiled context an agent asked for with a run id, and each one's
exact text with what it included (docs/dashboard.md)."""

from __future__ import annotations

from typing import Any

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
    """One compilation: its text, each layer's tokens against its budget, the task its relevant layer
    was chosen for, and every row it included, memories by layer."""
    access = project_for_user(request, project)
    compilation = in_project(access, Compilation.objects.select_related("agent", "session"), compilation_id)
    memories = {m.pk: m for m in compilation.memories.select_related("agent")}
    layers = compilation.layers or {}
    relevant_ids = set(layers.get("relevant", {}).get("ids") or [])
    return render(
        request,
        "review/compilation.html",
        project_context(
            access,
            nav="compilations",
            compilation=compilation,
            layers=_layer_rows(layers),
            decisions=compilation.decisions.order_by("created_at", "id"),
            memories=[m for pk, m in memories.items() if pk not in relevant_ids],
            relevant=[memories[pk] for pk in layers.get("relevant", {}).get("ids") or [] if pk in memories],
            episodes=compilation.episodes.order_by("-created_at", "-id"),
        ),
    )


LAYER_NAMES = (
    ("boundaries", "Boundaries"),
    ("memory", "Memory"),
    ("relevant", "Relevant past knowledge"),
    ("session", "Current session"),
)


def _layer_rows(layers: dict[str, Any]) -> list[dict[str, Any]]:
    """Each recorded layer's name, tokens and budget (None: never cut), in block order. A record made
    before budgets were kept has no budget to show."""
    rows = []
    for key, name in LAYER_NAMES:
        layer = layers.get(key)
        if isinstance(layer, dict):
            budget = layer.get("budget")
            tokens = layer.get("tokens", 0)
            rows.append(
                {
                    "name": name,
                    "tokens": tokens,
                    "budget": budget,
                    "over": budget is not None and tokens > budget,
                    "cut": layer.get("cut") or 0,
                    "unbudgeted": "budget" in layer and budget is None,
                }
            )
    return rows
