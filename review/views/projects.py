"""The reviewer's projects, and a project's front page with its charts and latest actions
(docs/dashboard.md, "Project overview")."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db.models import Count, Q
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from ledger.models import EntryStatus
from review import charts
from review.access import project_for_user, projects_for
from review.views.audit import recent
from review.views.base import HtmxHttpRequest, project_context


@require_GET
@login_required
def home(request: HtmxHttpRequest) -> HttpResponse:
    projects = projects_for(request.user).annotate(
        pending=Count("entries", filter=Q(entries__status=EntryStatus.PENDING))
    )
    return render(request, "review/home.html", {"projects": projects.order_by("slug")})


@require_GET
@login_required
def project_page(request: HtmxHttpRequest, project: str) -> HttpResponse:
    access = project_for_user(request, project)
    return render(
        request,
        "review/project.html",
        project_context(
            access,
            nav="project",
            decisions=access.project.decisions.filter(status="active").count(),
            memories=access.project.memories.filter(status="active").count(),
            recent=recent(access.project),
            **charts.overview(access.project),
        ),
    )
