"""One inbox entry's page: the proposal, who decided it, its earlier versions as a diff, previous and next
through the filtered inbox, and the form a coordinator edits it with before merging (docs/dashboard.md
"Entry and decision pages").

The page reads the inbox's filters from its own query string (`?status=pending&agent=…&q=…`, the
pending queue when there is none) and carries them along on every link, so a reviewer walks the list
they filtered one entry at a time and comes back to it. A merge or a rejection taken here goes on to
the next entry, whose page says what was done in its toast and offers to undo it.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from ledger import services
from ledger.actions import inbox
from ledger.actions.shapes import EntryEditIn
from ledger.filters import ALL
from ledger.models import BOUNDARY_TYPES, AuditEvent, EntryStatus, InboxEntry
from review.access import ProjectAccess, in_project, project_for_user
from review.diff import revision_diffs
from review.filters import InboxFilter
from review.forms import DecisionTextForm
from review.inspect import flags, related_decisions
from review.neighbours import Neighbours, neighbours
from review.views.base import HtmxHttpRequest, place_links, project_context, refused, submit, with_query
from review.views.inbox import inbox_queryset, last_toast


class EntryTextForm(DecisionTextForm):
    """An entry's text, as a coordinator edits it before merging: like a decision's, but an entry may
    have no title (it is shown by its slug)."""

    title = forms.CharField(
        required=False,
        max_length=services.TITLE_MAX_LENGTH,
        error_messages={
            "max_length": "title: must be at most %(limit_value)d characters, got %(show_value)d",
            "null_characters_not_allowed": "title: must not contain the NUL character (\\u0000)",
        },
    )


def _entry(access: ProjectAccess, entry_id: int) -> InboxEntry:
    """The entry, read as the inbox reads it (with its place in the queue's order), and what it became."""
    rows = inbox_queryset(access.project).select_related("decision", "memory")
    return in_project(access, rows, entry_id)


def _queue_groups(chosen: dict[str, Any]) -> tuple[Q | None, ...]:
    """The inbox's priority (`inbox_queryset`), each value as a condition on the entry's own columns,
    in order, so the neighbours are found through the queue's index (`review.neighbours`); None for a
    value the filters `chosen` rule out (decided entries in the pending queue), which is not searched."""
    status, kind = chosen.get("status"), chosen.get("type")
    pending = status in (EntryStatus.PENDING, ALL)
    boundary, other = not kind or kind in BOUNDARY_TYPES, kind not in BOUNDARY_TYPES
    return (
        Q(status=EntryStatus.PENDING, type__in=BOUNDARY_TYPES) if pending and boundary else None,
        Q(status=EntryStatus.PENDING) & ~Q(type__in=BOUNDARY_TYPES) if pending and other else None,
        ~Q(status=EntryStatus.PENDING) if status != EntryStatus.PENDING else None,
    )


def _place(access: ProjectAccess, entry: InboxEntry, params: QueryDict) -> Neighbours:
    """The entry's neighbours in the inbox filtered by `params`, in the inbox's order."""
    filterset = InboxFilter(params, queryset=inbox_queryset(access.project))
    if not filterset.is_valid():
        return Neighbours(None, None, None, 0)
    groups = _queue_groups(filterset.form.cleaned_data)
    return neighbours(filterset.qs, entry, groups=("priority", groups))


def _links(access: ProjectAccess, place: Neighbours, query: str) -> dict[str, str]:
    """The URLs of the list and of the entries around this one, each with the list's query string."""
    links = place_links(place, access.project, "review:entry", "review:inbox", query)
    # After a merge or a rejection here, the reviewer goes on to the next entry, or back to the list.
    links["after"] = links["next"] or links["list"]
    return links


def _entry_page(
    request: HtmxHttpRequest,
    access: ProjectAccess,
    entry: InboxEntry,
    *,
    status: int = 200,
    edit: EntryTextForm | None = None,
) -> HttpResponse:
    """The entry's page; `edit` is its form as typed, after a refusal."""
    entry.flags = flags(entry.title, entry.content, entry.rationale)  # type: ignore[attr-defined]
    # What its merge forms send back: a merge is refused if the entry changes after this page.
    entry.version = services.entry_version(entry)  # type: ignore[attr-defined]
    query = request.GET.urlencode()
    place = _place(access, entry, request.GET)
    text = {"title": entry.title, "content": entry.content, "rationale": entry.rationale}
    links = _links(access, place, query)
    toast = last_toast(request, access)
    if toast:
        # An undo comes back to the entry it puts back (to the list, for several).
        ids = toast["ids"]
        one = reverse("review:entry", args=[access.project.slug, ids[0]]) if len(ids) == 1 else ""
        toast["back"] = with_query(one, query) if one else links["list"]
    context: dict[str, Any] = project_context(
        access,
        nav="inbox",
        entry=entry,
        place=place,
        links=links,
        toast=toast,
        query=query,
        related=related_decisions(entry),
        revisions=revision_diffs(list(entry.revisions.all()), entry),
        trail=AuditEvent.objects.filter(object_type="inboxentry", object_id=entry.pk),
        edit=edit or EntryTextForm(initial=text),
    )
    return render(request, "review/entry.html", context, status=status)


@require_GET
@login_required
def entry_page(request: HtmxHttpRequest, project: str, entry_id: int) -> HttpResponse:
    access = project_for_user(request, project)
    return _entry_page(request, access, _entry(access, entry_id))


@require_POST
@login_required
def entry_edit(request: HtmxHttpRequest, project: str, entry_id: int) -> HttpResponse:
    """Save a coordinator's version of a pending entry; then its page again, with the list's filters
    (the form posts to a URL carrying the page's query string)."""
    access = project_for_user(request, project, act=True)
    entry = _entry(access, entry_id)
    form = EntryTextForm(request.POST)
    edited = submit(
        form,
        lambda data: inbox.edit_as(access.caller, entry.pk, EntryEditIn(**data)),
    )
    if edited is None:
        # The page as it is now, the form as typed with each error beside its field; an entry decided
        # meanwhile has no form any more, so its refusal is said above the page.
        now = _entry(access, entry_id)
        if now.status != EntryStatus.PENDING:
            refused(request, form)
        return _entry_page(request, access, now, status=400, edit=form)
    if edited.updated_at == entry.updated_at:
        messages.success(request, "Nothing to save: the text is unchanged.")
    else:
        messages.success(request, "Saved. The agent's text is kept as a revision; merging takes yours.")
    url = reverse("review:entry", args=[access.project.slug, entry.pk])
    return redirect(with_query(url, request.GET.urlencode()))
