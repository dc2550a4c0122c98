"""The inbox coordinators triage: the queue, one entry's page, and merging or rejecting entries one by
one or in bulk (docs/dashboard.md).

An action answers an htmx request with the fragment to swap (the row, or the whole list after a bulk
action) and a plain form post with a redirect back to the list it came from.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Page
from django.db.models import Case, IntegerField, QuerySet, Value, When
from django.http import HttpResponse, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from ledger import services
from ledger.models import BOUNDARY_TYPES, AuditEvent, EntryStatus, InboxEntry, Project
from review.access import ProjectAccess, in_project, project_for_user
from review.filters import InboxFilter
from review.forms import BulkForm, RejectForm, problems
from review.inspect import flags, related_decisions
from review.views.base import (
    HtmxHttpRequest,
    attempt,
    paginate,
    project_context,
    redirect_back,
    render_list,
    submit,
)

# The session key holding a bulk merge that waits for a second confirmation (plain form posts only).
CONFIRM_KEY = "inbox_bulk_confirm"


def inbox_queryset(project: Project) -> QuerySet[InboxEntry]:
    """Pending architectural and scope entries first, then other pending ones, oldest first; then decided."""
    priority = Case(
        When(status=EntryStatus.PENDING, type__in=BOUNDARY_TYPES, then=Value(0)),
        When(status=EntryStatus.PENDING, then=Value(1)),
        default=Value(2),
        output_field=IntegerField(),
    )
    return (
        InboxEntry.objects.filter(project=project)
        .select_related("agent")
        .annotate(priority=priority)
        .order_by("priority", "created_at", "id")
    )


def _decorate(entries: list[Any]) -> list[Any]:
    for entry in entries:
        entry.flags = flags(entry.title, entry.content, entry.rationale)
    return entries


def _queue_page(entries: QuerySet[InboxEntry], number: str | None) -> Page[Any]:
    """One page of the queue in two queries at any depth: the count, then the page's rows.

    The queue's order is computed, so the database sorts every matching entry: it sorts their ids in a
    subquery (from `ledger_entry_review_queue` alone), and reads whole rows only for the page. Sorting
    whole entries, text and all, took most of the page's time and spilled to disk on deep pages. The
    page's rows are read in the list's own order, the queue's or a text search's relevance.
    """
    page = paginate(entries.values_list("pk", flat=True), number)
    rows = entries.filter(pk__in=page.object_list)
    return Page(_decorate(list(rows)), page.number, page.paginator)


def _pending_confirmation(request: HtmxHttpRequest, access: ProjectAccess) -> dict[str, Any] | None:
    """The bulk merge a plain form post left waiting for confirmation, shown once on this project's inbox."""
    if CONFIRM_KEY not in request.session:
        return None
    confirm = request.session.pop(CONFIRM_KEY)
    return confirm if confirm.get("project") == access.project.slug else None


def _render_inbox(
    request: HtmxHttpRequest,
    access: ProjectAccess,
    params: QueryDict,
    *,
    confirm: dict[str, Any] | None = None,
) -> HttpResponse:
    """The inbox filtered by `params` (the page's query string, or the one an action sent along)."""
    filterset = InboxFilter(params, queryset=inbox_queryset(access.project))
    entries = filterset.qs if filterset.is_valid() else InboxEntry.objects.none()
    page = _queue_page(entries, params.get("page"))
    context = project_context(
        access,
        filter=filterset,
        page=page,
        params=params,
        query=params.urlencode(),
        nav="inbox",
        confirm=confirm or _pending_confirmation(request, access),
    )
    return render_list(request, "review/inbox.html", "inbox-list", context)


@require_GET
@login_required
def inbox_list(request: HtmxHttpRequest, project: str) -> HttpResponse:
    access = project_for_user(request, project)
    return _render_inbox(request, access, request.GET)


@require_GET
@login_required
def entry_page(request: HtmxHttpRequest, project: str, entry_id: int) -> HttpResponse:
    access = project_for_user(request, project)
    entry = in_project(access, InboxEntry.objects.select_related("agent", "decision", "memory"), entry_id)
    _decorate([entry])
    return render(
        request,
        "review/entry.html",
        project_context(
            access,
            nav="inbox",
            entry=entry,
            related=related_decisions(entry),
            trail=AuditEvent.objects.filter(object_type="inboxentry", object_id=entry.pk),
        ),
    )


def _answer(
    request: HtmxHttpRequest, access: ProjectAccess, entry_id: int, *, error: str, done: str
) -> HttpResponse:
    """The row again for htmx (with the refusal in it), else the list it came from with a message."""
    if request.htmx:
        entry = in_project(access, inbox_queryset(access.project), entry_id)
        _decorate([entry])
        return render(
            request,
            "review/inbox.html#entry-row-swap",
            project_context(access, entry=entry, row_error=error),
        )
    inbox = reverse("review:inbox", args=[access.project.slug])
    return redirect_back(request, inbox, error=error, success=f"Entry {entry_id} {done}.")


@require_POST
@login_required
def entry_merge(request: HtmxHttpRequest, project: str, entry_id: int) -> HttpResponse:
    access = project_for_user(request, project, act=True)
    _, error = attempt(
        lambda: services.entry_merge(
            project=access.project, entry_id=entry_id, by=request.user.get_username(), via="dashboard"
        )
    )
    return _answer(request, access, entry_id, error=error, done="merged")


@require_POST
@login_required
def entry_reject(request: HtmxHttpRequest, project: str, entry_id: int) -> HttpResponse:
    access = project_for_user(request, project, act=True)
    form = RejectForm(request.POST, entry_id=entry_id)
    submit(
        form,
        lambda data: services.entry_reject(
            project=access.project,
            entry_id=entry_id,
            by=request.user.get_username(),
            reason=data["reason"],
            via="dashboard",
        ),
    )
    return _answer(request, access, entry_id, error=" ".join(problems(form)), done="rejected")


def _flagged(project: Project, ids: list[int]) -> list[dict[str, Any]]:
    """The pending entries among `ids` whose text is flagged, with their flags, in one query."""
    entries = InboxEntry.objects.filter(project=project, pk__in=ids, status=EntryStatus.PENDING).only(
        "id", "slug", "title", "content", "rationale"
    )
    found = []
    for entry in entries.order_by("id"):
        reasons = flags(entry.title, entry.content, entry.rationale)
        if reasons:
            found.append({"id": entry.pk, "title": entry.title or entry.slug, "flags": reasons})
    return found


def _bulk(access: ProjectAccess, by: str, data: dict[str, Any]) -> tuple[int, list[str]]:
    """Merge or reject each entry on its own, so one refusal does not stop the rest: how many were
    done, and a line for each refused one."""
    done, refused = 0, []
    for entry_id in data["ids"]:
        try:
            if data["action"] == "merge":
                services.entry_merge(project=access.project, entry_id=entry_id, by=by, via="dashboard")
            else:
                services.entry_reject(
                    project=access.project, entry_id=entry_id, by=by, reason=data["reason"], via="dashboard"
                )
            done += 1
        except services.LedgerError as exc:
            refused.append(f"#{entry_id}: {exc.message}")
    return done, refused


@require_POST
@login_required
def inbox_bulk(request: HtmxHttpRequest, project: str) -> HttpResponse:
    """Merge or reject every selected entry.

    A merge that includes a flagged entry merges nothing until it is sent again with `confirm_flagged`:
    the reviewer sees which entries are flagged and why, and confirms with one more button.
    """
    access = project_for_user(request, project, act=True)
    form = BulkForm(request.POST)
    done, refused = 0, problems(form)
    confirm = None
    if form.is_valid():
        data = form.cleaned_data
        unconfirmed = data["action"] == "merge" and not data["confirm_flagged"]
        flagged = _flagged(access.project, data["ids"]) if unconfirmed else []
        if flagged:
            confirm = {"project": access.project.slug, "ids": data["ids"], "flagged": flagged}
            named = "; ".join(
                f"#{item['id']} {item['title']} ({', '.join(item['flags'])})" for item in flagged
            )
            refused.append(f"Nothing merged: flagged entries need a second confirmation. {named}.")
        else:
            done, refused = _bulk(access, request.user.get_username(), data)
    if done:
        verb = "merged" if form.cleaned_data["action"] == "merge" else "rejected"
        messages.success(request, f"{done} {'entry' if done == 1 else 'entries'} {verb}.")
    for problem in refused:
        messages.error(request, problem)
    if request.htmx:
        # The list again, with the filters it was showing (sent along as `query`).
        params = QueryDict(request.POST.get("query", ""))
        return _render_inbox(request, access, params, confirm=confirm)
    if confirm:
        request.session[CONFIRM_KEY] = confirm
    return redirect_back(request, reverse("review:inbox", args=[access.project.slug]))
