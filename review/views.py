"""The review dashboard: projects, and the inbox coordinators triage (docs/dashboard.md).

Every view checks membership through `review.access`; writes go through `ledger.services`. Actions
answer an htmx request with the fragment to swap and a plain form post with a redirect back to the
list it came from (post/redirect/get), so everything works without JavaScript too.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Page, Paginator
from django.db.models import Case, Count, IntegerField, Q, QuerySet, Value, When
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from ledger import services
from ledger.models import BOUNDARY_TYPES, AuditEvent, EntryStatus, InboxEntry, Project
from review.access import ProjectAccess, project_for_user, projects_for
from review.filters import InboxFilter
from review.inspect import flags, related_decisions

PAGE_SIZE = 50
BULK_LIMIT = 200
# The session key holding a bulk merge that waits for a second confirmation (plain form posts only).
CONFIRM_KEY = "inbox_bulk_confirm"


def _counts(project: Project) -> dict[str, int]:
    """Entries by status, in one query (navigation and inbox header).

    Counting `status` rather than `id` lets PostgreSQL answer from the index alone (index-only scan).
    """
    totals = InboxEntry.objects.filter(project=project).aggregate(
        pending=Count("status", filter=Q(status=EntryStatus.PENDING)),
        merged=Count("status", filter=Q(status=EntryStatus.MERGED)),
        rejected=Count("status", filter=Q(status=EntryStatus.REJECTED)),
    )
    return {key: value or 0 for key, value in totals.items()}


def project_context(access: ProjectAccess, **extra: Any) -> dict[str, Any]:
    return {"project": access.project, "access": access, "counts": _counts(access.project), **extra}


def _back(request: HttpRequest, fallback: str) -> HttpResponseRedirect:
    """Redirect to `next` when it is a local URL (the filtered list the action came from)."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}
    ) or not target.startswith("/"):
        target = fallback
    return HttpResponseRedirect(target)


@require_GET
@login_required
def home(request: HttpRequest) -> HttpResponse:
    projects = projects_for(request.user).annotate(
        pending=Count("entries", filter=Q(entries__status=EntryStatus.PENDING))
    )
    return render(request, "review/home.html", {"projects": projects.order_by("slug")})


@require_GET
@login_required
def project_page(request: HttpRequest, project: str) -> HttpResponse:
    access = project_for_user(request, project)
    return render(
        request,
        "review/project.html",
        project_context(
            access,
            nav="project",
            decisions=access.project.decisions.filter(status="active").count(),
            memories=access.project.memories.filter(status="active").count(),
            recent=AuditEvent.objects.filter(project=access.project)[:10],
        ),
    )


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


def _decorate(entries: Any) -> Any:
    for entry in entries:
        entry.flags = flags(entry.title, entry.content, entry.rationale)
    return entries


def _queue_page(project: Project, entries: QuerySet[InboxEntry], number: str | None) -> Page[Any]:
    """One page of the queue in two queries at any depth: the count, then the page's rows.

    The queue's order is computed, so the database sorts every matching entry: it sorts their ids in a
    subquery (from `ledger_entry_review_queue` alone), and reads whole rows only for the page. Sorting
    whole entries, text and all, took most of the page's time and spilled to disk on deep pages.
    """
    page = Paginator(entries.values_list("pk", flat=True), PAGE_SIZE).get_page(number)
    rows = inbox_queryset(project).filter(pk__in=page.object_list)
    return Page(_decorate(list(rows)), page.number, page.paginator)


@require_GET
@login_required
def inbox(request: HttpRequest, project: str) -> HttpResponse:
    access = project_for_user(request, project)
    return _render_inbox(request, access)


def _pending_confirmation(request: HttpRequest, access: ProjectAccess) -> dict[str, Any] | None:
    """The bulk merge a plain form post left waiting for confirmation, shown once on this project's inbox."""
    if CONFIRM_KEY not in request.session:
        return None
    confirm = request.session.pop(CONFIRM_KEY)
    return confirm if confirm.get("project") == access.project.slug else None


def _render_inbox(
    request: HttpRequest,
    access: ProjectAccess,
    *,
    template: str = "review/inbox.html",
    confirm: dict[str, Any] | None = None,
) -> HttpResponse:
    filterset = InboxFilter(request.GET, queryset=inbox_queryset(access.project))
    entries = filterset.qs if filterset.is_valid() else InboxEntry.objects.none()
    page = _queue_page(access.project, entries, request.GET.get("page"))
    context = project_context(
        access,
        filter=filterset,
        page=page,
        query=request.GET.urlencode(),
        nav="inbox",
        confirm=confirm or _pending_confirmation(request, access),
    )
    if request.htmx and template == "review/inbox.html":  # type: ignore[attr-defined]
        template = "review/inbox.html#inbox-list"
    return render(request, template, context)


@require_GET
@login_required
def entry_page(request: HttpRequest, project: str, entry_id: int) -> HttpResponse:
    access = project_for_user(request, project)
    entry = get_object_or_404(
        InboxEntry.objects.select_related("agent", "decision", "memory"), project=access.project, pk=entry_id
    )
    entry.flags = flags(entry.title, entry.content, entry.rationale)  # type: ignore[attr-defined]
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


def _review(request: HttpRequest, project: str, entry_id: int, action: str) -> HttpResponse:
    access = project_for_user(request, project, act=True)
    by = request.user.get_username()
    error = ""
    try:
        if action == "merge":
            services.entry_merge(project=access.project, entry_id=entry_id, by=by, via="dashboard")
        else:
            reason = request.POST.get(f"reason_{entry_id}") or request.POST.get("reason", "")
            services.entry_reject(
                project=access.project, entry_id=entry_id, by=by, reason=reason, via="dashboard"
            )
    except services.NotFound as exc:
        raise Http404(exc.message) from exc
    except services.LedgerError as exc:
        error = exc.message
    if request.htmx:  # type: ignore[attr-defined]
        entry = get_object_or_404(inbox_queryset(access.project), pk=entry_id)
        _decorate([entry])
        return render(
            request,
            "review/inbox.html#entry-row-swap",
            project_context(access, entry=entry, row_error=error),
        )
    if error:
        messages.error(request, error)
    else:
        messages.success(request, f"Entry {entry_id} {'merged' if action == 'merge' else 'rejected'}.")
    return _back(request, reverse("review:inbox", args=[access.project.slug]))


@require_POST
@login_required
def entry_merge(request: HttpRequest, project: str, entry_id: int) -> HttpResponse:
    return _review(request, project, entry_id, "merge")


@require_POST
@login_required
def entry_reject(request: HttpRequest, project: str, entry_id: int) -> HttpResponse:
    return _review(request, project, entry_id, "reject")


def selected_ids(values: list[str]) -> list[int]:
    """The row ids ticked in a list: plain decimal numbers only (`²` is a digit to Python, not an id)."""
    return list(dict.fromkeys(int(v) for v in values if v.isascii() and v.isdigit() and len(v) <= 18))


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


@require_POST
@login_required
def inbox_bulk(request: HttpRequest, project: str) -> HttpResponse:
    """Merge or reject every selected entry; each one on its own, so one refusal does not stop the rest.

    A merge that includes a flagged entry merges nothing until it is sent again with `confirm_flagged=1`:
    the reviewer sees which entries are flagged and why, and confirms with one more button.
    """
    access = project_for_user(request, project, act=True)
    action = request.POST.get("action")
    ids = selected_ids(request.POST.getlist("ids"))[:BULK_LIMIT]
    done, refused = 0, []
    confirm = None
    if action not in ("merge", "reject"):
        refused.append("choose merge or reject")
    elif not ids:
        refused.append("select at least one entry")
    elif (
        action == "merge"
        and request.POST.get("confirm_flagged") != "1"
        and (flagged := _flagged(access.project, ids))
    ):
        confirm = {"project": access.project.slug, "ids": ids, "flagged": flagged}
        named = "; ".join(f"#{item['id']} {item['title']} ({', '.join(item['flags'])})" for item in flagged)
        refused.append(f"Nothing merged: flagged entries need a second confirmation. {named}.")
    else:
        by = request.user.get_username()
        reason = request.POST.get("reason", "")
        for entry_id in ids:
            try:
                if action == "merge":
                    services.entry_merge(project=access.project, entry_id=entry_id, by=by, via="dashboard")
                else:
                    services.entry_reject(
                        project=access.project, entry_id=entry_id, by=by, reason=reason, via="dashboard"
                    )
                done += 1
            except services.LedgerError as exc:
                refused.append(f"#{entry_id}: {exc.message}")
    verb = "merged" if action == "merge" else "rejected"
    if done:
        messages.success(request, f"{done} {'entry' if done == 1 else 'entries'} {verb}.")
    for problem in refused:
        messages.error(request, problem)
    if request.htmx:  # type: ignore[attr-defined]
        # Re-render the list with the filters it was showing (sent along as `query`).
        request.GET = QueryDict(request.POST.get("query", ""))  # type: ignore[assignment]
        return _render_inbox(request, access, template="review/inbox.html#inbox-list", confirm=confirm)
    if confirm:
        request.session[CONFIRM_KEY] = confirm
    return _back(request, reverse("review:inbox", args=[access.project.slug]))
