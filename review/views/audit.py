"""The audit list: every reviewer action of a project, newest first, each naming its object by title
(docs/dashboard.md, "Audit").

An audit event stores only the type and id of what it touched. `named` resolves the titles of a
page's events in one query per object type on the page, never one per row, so the project page's
recent actions and the audit page make a fixed number of queries.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.db.models import Model, QuerySet
from django.db.models.functions import Substr
from django.http import HttpResponse
from django.urls import reverse
from django.utils.text import Truncator
from django.views.decorators.http import require_GET

from ledger.models import AgentMemory, AuditEvent, Decision, Episode, InboxEntry, Project, Session
from review.access import project_for_user
from review.audit_filters import OBJECT_TYPES, AuditFilter, past_tense
from review.views.base import HtmxHttpRequest, paginate, project_context, render_list

# A memory has no title: its text, cut to this many characters, stands for it.
MEMORY_NAME_LENGTH = 60


@dataclass(frozen=True)
class NamedEvent:
    """An audit event as the lists say it: "lead merged “Use PostgreSQL”", with a link when the object
    has a page. `name` is empty when the object is gone; the list then says its type and id."""

    event: AuditEvent
    verb: str
    noun: str
    name: str
    url: str

    @property
    def ref(self) -> str:
        return f"{self.noun} #{self.event.object_id}"


def _titles(model: type[Model], project: Project, ids: set[int], *fields: str) -> dict[int, str]:
    """Object id → the first non-empty of `fields`, for the rows of `model` in `project`: one query."""
    rows = model._default_manager.filter(project=project, pk__in=ids).order_by().values_list("pk", *fields)
    return {row[0]: next((value for value in row[1:] if value), "") for row in rows}


def _memory_titles(project: Project, ids: set[int]) -> dict[int, str]:
    """A memory's opening words: only that much of its text is read."""
    rows = (
        AgentMemory.objects.filter(project=project, pk__in=ids)
        .order_by()
        .annotate(opening=Substr("content", 1, MEMORY_NAME_LENGTH + 1))
        .values_list("pk", "opening")
    )
    return {pk: Truncator(opening).chars(MEMORY_NAME_LENGTH) for pk, opening in rows}


# Per object type: how its titles are read, and the URL name of its page (none for memories,
# sessions and episodes, which are shown in lists).
TITLES: dict[str, Callable[[Project, set[int]], dict[int, str]]] = {
    "inboxentry": lambda project, ids: _titles(InboxEntry, project, ids, "title", "slug"),
    "decision": lambda project, ids: _titles(Decision, project, ids, "title"),
    "agentmemory": _memory_titles,
    "session": lambda project, ids: _titles(Session, project, ids, "session_id"),
    "episode": lambda project, ids: _titles(Episode, project, ids, "run_id"),
}
PAGES = {"inboxentry": "review:entry", "decision": "review:decision"}


def named(project: Project, events: Iterable[AuditEvent]) -> list[NamedEvent]:
    """`events` with their objects' titles and links: one query per object type among them."""
    events = list(events)
    wanted: dict[str, set[int]] = defaultdict(set)
    for event in events:
        if event.object_type in TITLES:
            wanted[event.object_type].add(event.object_id)
    titles = {kind: TITLES[kind](project, ids) for kind, ids in wanted.items()}
    result = []
    for event in events:
        name = titles.get(event.object_type, {}).get(event.object_id, "")
        page = PAGES.get(event.object_type)
        result.append(
            NamedEvent(
                event=event,
                verb=past_tense(event.action),
                noun=OBJECT_TYPES.get(event.object_type, event.object_type),
                name=name,
                url=reverse(page, args=[project.slug, event.object_id]) if page and name else "",
            )
        )
    return result


def newest_first(project: Project) -> QuerySet[AuditEvent]:
    """The project's audit events, newest first: by id, the order they were written (an event's time
    is set when it is written). The index on the project reads them in that order without sorting the
    project's whole trail, which ordering by `created_at` would."""
    return AuditEvent.objects.filter(project=project).order_by("-id")


def recent(project: Project, count: int = 10) -> list[NamedEvent]:
    """The project's latest `count` reviewer actions, named."""
    return named(project, newest_first(project)[:count])


@require_GET
@login_required
def audit_list(request: HtmxHttpRequest, project: str) -> HttpResponse:
    """Every audit event of the project, filtered by actor, action, object type and channel (`via`)."""
    access = project_for_user(request, project)
    filterset = AuditFilter(request.GET, queryset=newest_first(access.project))
    rows = filterset.qs if filterset.is_valid() else AuditEvent.objects.none()
    page = paginate(rows, request.GET.get("page"))
    context = project_context(
        access,
        nav="audit",
        filter=filterset,
        page=page,
        events=named(access.project, page.object_list),
        params=request.GET,
    )
    return render_list(request, "review/audit.html", "audit-list", context)
