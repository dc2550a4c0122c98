"""Sessions: what each runtime said it was working on, newest first (docs/dashboard.md)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.views.decorators.http import require_GET

from ledger.models import Session
from review.access import project_for_user
from review.inspect import flags
from review.views.base import HtmxHttpRequest, paginate, project_context, render_list


@require_GET
@login_required
def session_list(request: HtmxHttpRequest, project: str) -> HttpResponse:
    access = project_for_user(request, project)
    page = paginate(Session.objects.filter(project=access.project), request.GET.get("page"))
    sessions: list[Any] = list(page.object_list)
    for session in sessions:
        issues = [str(issue) for issue in session.active_issues or []]
        session.flags = flags(session.focus_area, *issues, session.summary)
    page.object_list = sessions
    context = project_context(access, nav="sessions", page=page, params=request.GET)
    return render_list(request, "review/sessions.html", "session-list", context)
