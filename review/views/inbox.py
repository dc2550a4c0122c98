"""The inbox coordinators triage: the queue, and merging, rejecting and undoing entries one by one or in
bulk (docs/dashboard.md); one entry's page is `review.views.entry`.

A decided row stays where it was, one line saying what became of it, with an Undo while the undo window
is open; the toast above the list says what the last action did and offers to undo it. Single and bulk
actions behave alike: with htmx, the decided rows are swapped in place (the bulk answer swaps them out
of band), and the list then asks for the entries that follow (`_refill`); without JavaScript, a plain
form post is answered with a redirect back to the list it came from, and the toast is shown there once.
A result is said once, by the toast; the messages above the list carry what was refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Page
from django.db.models import Case, IntegerField, QuerySet, Value, When
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html_join, strip_tags
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import reswap

from ledger import services
from ledger.actions import inbox
from ledger.actions.shapes import MergeIn, RejectIn
from ledger.competition import competitors
from ledger.models import BOUNDARY_TYPES, Decision, EntryStatus, InboxEntry, Project
from review.access import ProjectAccess, in_project, project_for_user
from review.filters import InboxFilter
from review.forms import BULK_LIMIT, BulkForm, DensityForm, IdsField, MergeForm, RejectForm, problems
from review.inspect import excerpt, flags
from review.models import choose_density, density_of
from review.templatetags.review_tags import ago
from review.views.base import (
    HtmxHttpRequest,
    hidden_fields,
    paginate,
    project_context,
    redirect_back,
    refused,
    render_list,
    submit,
    urls_by_id,
    with_query,
)

# The session key holding a bulk merge that waits for a second confirmation (plain form posts only).
CONFIRM_KEY = "inbox_bulk_confirm"
# The session key holding the toast of the last action, shown once on the list a plain post returns to.
TOAST_KEY = "inbox_toast"
# How many of the proposals a row competes with it names.
RIVALS_SHOWN = 3
# How many of a bulk action's entries the toast names; the rows themselves say what became of each.
TOAST_NAMED = 5


def undo_seconds() -> int:
    """How long after a merge or a rejection it can be undone (`CANON_UNDO_SECONDS`)."""
    return int(getattr(settings, "CANON_UNDO_SECONDS", 600))


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


def _decorate(project: Project, entries: list[Any]) -> list[Any]:
    """The rows as the list shows them: their name, links, excerpt, flags and version (what a merge sends
    back: `services.inbox.merge.entry_version`), and what each pending one competes with (the pending
    entries and active decisions on the same topic, `ledger.competition`)."""
    rivals = competitors(project, entries) if entries else {}
    names = ("entry", "entry_merge", "entry_reject", "decision")
    page_of, merge_of, reject_of, decision_of = (urls_by_id(f"review:{name}", project.slug) for name in names)
    for entry in entries:
        entry.label = entry.title or entry.slug
        entry.url = page_of(entry.pk)
        entry.merge_url, entry.reject_url = merge_of(entry.pk), reject_of(entry.pk)
        entry.excerpt = excerpt(entry.content)
        entry.flags = flags(entry.title, entry.content, entry.rationale)
        entry.version = services.entry_version(entry)
        found = rivals.get(entry.pk, [])
        # A row names the first few; the entry's page shows them all.
        entry.rivals = [
            {"kind": "decision", "pk": row.pk, "title": row.title, "url": decision_of(row.pk)}
            if isinstance(row, Decision)
            else {"kind": "entry", "pk": row.pk, "title": row.title or row.slug, "url": page_of(row.pk)}
            for row in found[:RIVALS_SHOWN]
        ]
        entry.more_rivals = len(found) - len(entry.rivals)
    return entries


def _queue_page(
    project: Project,
    entries: QuerySet[InboxEntry],
    number: str | None,
    *,
    shown: frozenset[int] = frozenset(),
) -> Page[Any]:
    """One page of the queue in three queries at any depth: the count, the page's ids, their rows (but
    those `shown` already, which a refill leaves out).

    The queue's order is computed, so the database sorts every matching entry: it sorts their ids
    (from `ledger_entry_review_queue` alone), and whole rows are read only for the page, by id. Sorting
    whole entries, text and all, took most of the page's time and spilled to disk on deep pages; reading
    the rows through the filtered list again ranked a text search twice. The rows keep the ids' order,
    the queue's or a text search's relevance.
    """
    page = paginate(entries.values_list("pk", flat=True), number)
    ids = [pk for pk in page.object_list if pk not in shown]
    # Read by id alone: the page's rows taken again from `entries` would rank a text search once more.
    rows = {row.pk: row for row in inbox_queryset(project).filter(pk__in=ids)}
    return Page(_decorate(project, [rows[pk] for pk in ids if pk in rows]), page.number, page.paginator)


def _session_once(request: HtmxHttpRequest, key: str, access: ProjectAccess) -> dict[str, Any] | None:
    """What a plain form post left in the session under `key` for this project's inbox, shown once."""
    if key not in request.session:
        return None
    kept = request.session.pop(key)
    return kept if kept.get("project") == access.project.slug else None


def _toast(action: str, entries: Sequence[InboxEntry]) -> dict[str, Any]:
    """What the toast says after `action` on `entries`, with the ids an Undo would put back (none after
    an undo) and until when (seconds since the epoch) it may."""
    ids = [entry.pk for entry in entries]
    if len(entries) == 1:
        named = f"#{entries[0].pk} {entries[0].title or entries[0].slug}"
        text = {
            "merge": f"Merged {named}.",
            "reject": f"Rejected {named}.",
            "undo": f"Undone: {named} is pending again.",
        }[action]
    else:
        listed = ", ".join(f"#{pk}" for pk in ids[:TOAST_NAMED])
        if len(ids) > TOAST_NAMED:
            listed += f" and {len(ids) - TOAST_NAMED} more"
        text = {
            "merge": f"Merged {len(ids)} entries: {listed}.",
            "reject": f"Rejected {len(ids)} entries: {listed}.",
            "undo": f"Undone: {len(ids)} entries are pending again ({listed}).",
        }[action]
    until = int(timezone.now().timestamp()) + undo_seconds()
    return {"text": text, "ids": ids if action != "undo" else [], "until": until}


def _shown_toast(toast: dict[str, Any] | None) -> dict[str, Any] | None:
    """The toast as the page shows it: its Undo only while the undo window is still open."""
    if toast and toast["ids"] and toast["until"] <= timezone.now().timestamp():
        toast = {**toast, "ids": []}
    return toast


def last_toast(request: HtmxHttpRequest, access: ProjectAccess) -> dict[str, Any] | None:
    """The toast a plain form post left for the page it returned to (the list, or an entry's page when
    the action was taken on one), shown once."""
    return _shown_toast(_session_once(request, TOAST_KEY, access))


def changed_words(exc: services.ChangedSinceRead) -> str:
    """A merge refused because the entry changed since it was read, as a person says it: who changed it
    and how long ago, as the lists say an age ("3 minutes ago")."""
    when = strip_tags(ago(exc.changed_at))
    if exc.edited_by is not None:
        who = f"{exc.edited_by} edited it {when}"
    else:
        who = f"{exc.agent_name}, its agent, sent it again {when}"
    return f"Not merged: it changed since you read it: {who}. Read it again, then merge what you read."


def _list_context(request: HttpRequest, access: ProjectAccess, query: str, **extra: Any) -> dict[str, Any]:
    """What every part of the inbox page needs: where its forms return to (`listing` and `query`, and
    `back`, the two as the hidden fields every form carries: `next` for a plain post, `query` for
    htmx; `row_fields`, the same with the CSRF token, for the forms of each row), the moment before
    which a decision can no longer be undone, and the project's header."""
    undo_after: datetime = timezone.now() - timedelta(seconds=undo_seconds())
    listing = reverse("review:inbox", args=[access.project.slug])
    returns = {"next": f"{listing}?{query}" if query else listing, "query": query}
    back = format_html_join("", '<input type="hidden" name="{}" value="{}">', returns.items())
    return project_context(
        access,
        listing=listing,
        query=query,
        back=back,
        row_fields=hidden_fields(request, **returns),
        undo_after=undo_after,
        **extra,
    )


def _render_inbox(
    request: HtmxHttpRequest,
    access: ProjectAccess,
    params: QueryDict,
    *,
    confirm: dict[str, Any] | None = None,
) -> HttpResponse:
    """The inbox filtered by `params` (the page's query string, or the one an action sent along)."""
    project = access.project
    filterset = InboxFilter(params, queryset=inbox_queryset(project), project=project)
    entries = filterset.qs if filterset.is_valid() else InboxEntry.objects.none()
    page = _queue_page(project, entries, params.get("page"))
    context = _list_context(
        request,
        access,
        params.urlencode(),
        filter=filterset,
        page=page,
        params=params,
        nav="inbox",
        # Group headings follow the queue's order; a text search lists by relevance instead.
        grouped=not params.get("q"),
        density=density_of(request.user),
        confirm=confirm or _session_once(request, CONFIRM_KEY, access),
        toast=last_toast(request, access),
    )
    return render_list(request, "review/inbox.html", "inbox-list", context)


def _refill(request: HtmxHttpRequest, access: ProjectAccess, params: QueryDict) -> HttpResponse:
    """What slides into a list of pending entries once some of its rows were decided in place: the
    entries of its page now that it does not show yet (`shown`: the pending rows it shows), each in its
    group (`group`: the groups it shows), its pages and count, and its empty state when nothing is left.
    Answered out of band: the rows shown stay where they are, decided or not."""
    try:
        shown = IdsField(limit=BULK_LIMIT, required=False).clean(params.getlist("shown"))
    except ValidationError:
        return HttpResponse("Too many rows shown to refill this list: reload it.", status=400)
    groups = set(params.getlist("group"))
    listed = params.copy()
    for name in ("refill", "shown", "group"):
        listed.pop(name, None)
    project = access.project
    filterset = InboxFilter(listed, queryset=inbox_queryset(project), project=project)
    entries = filterset.qs if filterset.is_valid() else InboxEntry.objects.none()
    page = _queue_page(project, entries, listed.get("page"), shown=frozenset(shown))
    grouped = not listed.get("q")
    added: list[dict[str, Any]] = []
    for entry in page.object_list:
        key = str(entry.priority) if grouped else "all"
        if not added or added[-1]["key"] != key:
            added.append({"key": key, "shown": key in groups, "rows": []})
        added[-1]["rows"].append(entry)
    context = _list_context(
        request,
        access,
        listed.urlencode(),
        page=page,
        params=listed,
        filter=filterset,
        grouped=grouped,
        added=added,
    )
    return render(request, "review/inbox.html#inbox-refill", context)


@require_GET
@login_required
def inbox_list(request: HtmxHttpRequest, project: str) -> HttpResponse:
    access = project_for_user(request, project)
    if request.htmx and request.GET.get("refill"):
        return _refill(request, access, request.GET)
    return _render_inbox(request, access, request.GET)


def _rows(access: ProjectAccess, ids: list[int]) -> list[Any]:
    """The rows of `ids` as the list shows them, in the queue's order."""
    return _decorate(access.project, list(inbox_queryset(access.project).filter(pk__in=ids)))


def _keep_toast(request: HtmxHttpRequest, access: ProjectAccess, toast: dict[str, Any]) -> None:
    """Leave the toast for the list a plain form post is redirected to."""
    request.session[TOAST_KEY] = {"project": access.project.slug, **toast}


def _answer(
    request: HtmxHttpRequest,
    access: ProjectAccess,
    entry_id: int,
    *,
    action: str,
    done: InboxEntry | None,
    error: str,
    merged: services.Merged | None = None,
) -> HttpResponse:
    """The row again for htmx (decided, or with the refusal in it) and the toast, else the page it came
    from (the list, or the next entry's page) with the toast, or the refusal as a message. A merge that
    did more than merge (`merged`: rejected the competitors, found the memory already recorded) says
    so, and swaps the rows it rejected too."""
    toast = _toast(action, [done]) if done is not None else None
    if toast and merged is not None and merged.message != _plain_merge(merged):
        toast["text"] = f"#{entry_id} {merged.entry.title or merged.entry.slug}: {merged.message}."
    if request.htmx:
        if merged is not None and merged.rejected:
            return _swap_rows(request, access, [entry_id, *merged.rejected], toast)
        entry = in_project(access, inbox_queryset(access.project), entry_id)
        _decorate(access.project, [entry])
        context = _list_context(
            request, access, request.POST.get("query", ""), entry=entry, row_error=error, toast=toast
        )
        return render(request, "review/inbox.html#entry-row-swap", context)
    if toast:
        _keep_toast(request, access, toast)
    listing = reverse("review:inbox", args=[access.project.slug])
    return redirect_back(request, listing, error=error)


def _plain_merge(merged: services.Merged) -> str:
    """What a merge that only merged says: the toast's usual line is enough for it."""
    entry = merged.entry
    if entry.decision_id is not None:
        return f"merged as decision {entry.decision_id}"
    return f"merged as memory {entry.memory_id}"


def merge_question(exc: services.LedgerError, *, confirmed: bool) -> dict[str, Any] | None:
    """What a refused merge asks the reviewer (`review/_merge_question.html`): to confirm a flagged
    text, or to choose what becomes of the competing boundaries; None for any other refusal."""
    if isinstance(exc, services.FlaggedEntry):
        return {"kind": "flagged", "flags": exc.flags}
    if isinstance(exc, services.CompetingBoundary):
        return {
            "kind": "competing",
            "confirmed": confirmed,
            "count": len(exc.competitors),
            "decisions": [rival for rival in exc.competitors if isinstance(rival, Decision)],
            "entries": [rival for rival in exc.competitors if isinstance(rival, InboxEntry)],
        }
    return None


def ask_before_merging(
    request: HtmxHttpRequest,
    access: ProjectAccess,
    entry_id: int,
    question: dict[str, Any],
    *,
    action: str,
    carry: dict[str, Any] | None = None,
) -> HttpResponse:
    """A merge that needs the reviewer's answer first: over htmx, the row with the question in it; for
    a plain post, a page with the question (409), whose forms post to `action` again with `carry`
    (what the first post chose) and `next`, so it works without JavaScript."""
    if request.htmx:
        entry = in_project(access, inbox_queryset(access.project), entry_id)
        _decorate(access.project, [entry])
        context = _list_context(
            request, access, request.POST.get("query", ""), entry=entry, question=question
        )
        return render(request, "review/inbox.html#entry-row-swap", context)
    entry = in_project(access, InboxEntry.objects.select_related("agent"), entry_id)
    entry.version = services.entry_version(entry)  # type: ignore[attr-defined]
    listing = reverse("review:inbox", args=[access.project.slug])
    back = request.POST.get("next", "")
    if not back.startswith("/") or back.startswith("//"):
        back = listing
    carried = [(name, value) for name, values in (carry or {}).items() for value in values]
    context = project_context(
        access,
        nav="inbox",
        entry=entry,
        flags=flags(entry.title, entry.content, entry.rationale),
        question=question,
        action=action,
        back=back,
        fields=hidden_fields(request, next=back),
        carry=format_html_join("", '<input type="hidden" name="{}" value="{}">', carried),
    )
    return render(request, "review/merge_question.html", context, status=409)


@require_POST
@login_required
def entry_merge(request: HtmxHttpRequest, project: str, entry_id: int) -> HttpResponse:
    """Merge one entry, the version the reviewer was shown (`seen`). A flagged entry, or a boundary
    competing with others, is not merged until the reviewer answers what the merge asks
    (`ask_before_merging`). One changed since it was shown is not merged: over htmx its row comes back
    with the new text and the refusal; a plain post goes to its page, to be read whole again."""
    access = project_for_user(request, project, act=True)
    form = MergeForm(request.POST)
    if not form.is_valid():
        return _answer(request, access, entry_id, action="merge", done=None, error=" ".join(problems(form)))
    choices = form.choices()
    try:
        merged = inbox.merge(access.caller, entry_id, choices)
    except services.NotFound as exc:
        raise Http404(exc.message) from exc
    except services.ChangedSinceRead as exc:
        if request.htmx:
            return _answer(request, access, entry_id, action="merge", done=None, error=changed_words(exc))
        messages.error(request, changed_words(exc))
        page = reverse("review:entry", args=[access.project.slug, entry_id])
        return redirect(with_query(page, request.POST.get("query", "")))
    except services.LedgerError as exc:
        question = merge_question(exc, confirmed=choices.confirm_flagged)
        if question is None:
            return _answer(request, access, entry_id, action="merge", done=None, error=exc.message)
        url = reverse("review:entry_merge", args=[access.project.slug, entry_id])
        return ask_before_merging(request, access, entry_id, question, action=url)
    return _answer(request, access, entry_id, action="merge", done=merged.entry, error="", merged=merged)


@require_POST
@login_required
def entry_reject(request: HtmxHttpRequest, project: str, entry_id: int) -> HttpResponse:
    """Reject one entry with the reason typed in its own row (never the bulk bar's)."""
    access = project_for_user(request, project, act=True)
    form = RejectForm(request.POST, entry_id=entry_id)
    done = submit(
        form,
        lambda data: inbox.reject_as(access.caller, entry_id, RejectIn(reason=data["reason"])),
    )
    return _answer(request, access, entry_id, action="reject", done=done, error=" ".join(problems(form)))


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


def _decide(access: ProjectAccess, data: dict[str, Any], entry_id: int) -> InboxEntry:
    """Merge (the version its row showed), reject or undo one entry through its action."""
    caller, action = access.caller, data["action"]
    if action == "merge":
        # A bulk merge asks about flagged entries itself (`inbox_bulk`), before merging any.
        choices = MergeIn(confirm_flagged=data["confirm_flagged"], version=data["seen"].get(entry_id))
        return inbox.merge(caller, entry_id, choices).entry
    if action == "undo":
        return inbox.undo_as(caller, entry_id)
    return inbox.reject_as(caller, entry_id, RejectIn(reason=data["reason"]))


def _bulk(access: ProjectAccess, data: dict[str, Any]) -> tuple[list[InboxEntry], list[str], dict[int, str]]:
    """Merge, reject or undo each entry on its own, so one refusal does not stop the rest: the entries
    done, a line for each refused one, and the refusals of the entries changed since their row was
    shown (by id), whose rows are shown again with their new text and the refusal (so over htmx the
    refusal is said there, not among the lines)."""
    done, refused, changed = [], [], {}
    for entry_id in data["ids"]:
        try:
            done.append(_decide(access, data, entry_id))
        except services.ChangedSinceRead as exc:
            changed[entry_id] = changed_words(exc)
        except services.LedgerError as exc:
            refused.append(f"#{entry_id}: {exc.message}")
    return done, refused, changed


def _swap_rows(
    request: HtmxHttpRequest,
    access: ProjectAccess,
    ids: list[int],
    toast: dict[str, Any] | None,
    changed: dict[int, str] | None = None,
) -> HttpResponse:
    """The answer to a bulk action over htmx: the rows it decided (or put back) swapped in place, out of
    band, with the messages, the counts and the toast; the list itself stays as it is. The rows
    `changed` since they were shown come back too, with their new text and their refusal."""
    changed = changed or {}
    entries = _rows(access, [*ids, *changed])
    for entry in entries:
        entry.row_error = changed.get(entry.pk, "")
    context = _list_context(request, access, request.POST.get("query", ""), entries=entries, toast=toast)
    return reswap(render(request, "review/inbox.html#rows-swap", context), "none")


@require_POST
@login_required
def inbox_bulk(request: HtmxHttpRequest, project: str) -> HttpResponse:
    """Merge, reject or undo every selected entry.

    A merge that includes a flagged entry merges nothing until it is sent again with `confirm_flagged`:
    the reviewer sees which entries are flagged and why (above the list, once), and confirms with one
    more button. A merge refuses each entry changed since its row was shown (`seen-<id>`) and merges the
    rest; over htmx the rows refused so come back with their new text and the refusal. What was done is
    said by the toast alone; the messages say what was refused.
    """
    access = project_for_user(request, project, act=True)
    form = BulkForm(request.POST)
    done: list[InboxEntry] = []
    changed: dict[int, str] = {}
    refusals = problems(form)
    confirm = None
    if form.is_valid():
        data = form.cleaned_data
        unconfirmed = data["action"] == "merge" and not data["confirm_flagged"]
        flagged = _flagged(access.project, data["ids"]) if unconfirmed else []
        if flagged:
            # The versions the rows showed go along: the second post merges only those.
            seen = {str(pk): version for pk, version in data["seen"].items()}
            confirm = {"project": access.project.slug, "ids": data["ids"], "flagged": flagged, "seen": seen}
        else:
            done, refusals, changed = _bulk(access, data)
    toast = _toast(form.cleaned_data["action"], done) if done else None
    if changed and not request.htmx:
        # Without htmx the rows changed since are not shown with their refusal: the messages say it.
        rows = InboxEntry.objects.filter(project=access.project, pk__in=changed).values_list(
            "pk", "title", "slug"
        )
        named = {pk: title or slug for pk, title, slug in rows}
        refusals += [f"#{pk} {named[pk]}: {said}" for pk, said in changed.items()]
    for problem in refusals:
        messages.error(request, problem)
    if request.htmx:
        if confirm:
            # The list again, with the filters it was showing (sent along as `query`), and the question.
            return _render_inbox(request, access, QueryDict(request.POST.get("query", "")), confirm=confirm)
        return _swap_rows(request, access, [entry.pk for entry in done], toast, changed)
    if confirm:
        request.session[CONFIRM_KEY] = confirm
    if toast:
        _keep_toast(request, access, toast)
    return redirect_back(request, reverse("review:inbox", args=[access.project.slug]))


@require_POST
@login_required
def inbox_density(request: HtmxHttpRequest, project: str) -> HttpResponse:
    """Remember how dense the reviewer wants the inbox. It is their own choice, not the project's, so a
    viewer may make it too; a non-member gets 404 like for anything of the project."""
    access = project_for_user(request, project)
    form = DensityForm(request.POST)
    if form.is_valid():
        choose_density(request.user, form.cleaned_data["density"])
    else:
        refused(request, form)
    return redirect_back(request, reverse("review:inbox", args=[access.project.slug]))
