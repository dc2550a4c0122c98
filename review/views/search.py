"""One search across the project: the box every project page carries, and its results (docs/dashboard.md,
"Search").

A member reads everything of the project, so the search is a coordinator's view (`ledger.finder.find`
with no agent): decisions, every agent's memories, the sessions' summaries, the episodes and the inbox,
in one list, best match first, at most `LIMIT` hits. `kind` keeps one kind of row; `inactive` adds
the rows no longer in force. The list of kinds and the hits are one region, which an htmx request
gets alone.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.urls import reverse
from django.utils.html import escape, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET

from ledger import finder, services
from ledger.models import Project
from ledger.search import terms
from review.access import project_for_user
from review.views.base import HtmxHttpRequest, project_context, render_list, urls_by_id

# The most hits a search shows: a list to read, not to page through; more words narrow it.
LIMIT = 50
# The choices of `kind`, in the order the page offers them.
KIND_LABELS = {
    "": "Everything",
    finder.DECISION: "Decisions",
    finder.MEMORY: "Memories",
    finder.SUMMARY: "Session summaries",
    finder.EPISODE: "Episodes",
    finder.ENTRY: "Inbox",
}
HIT_LABELS = {
    finder.DECISION: "decision",
    finder.MEMORY: "memory",
    finder.SUMMARY: "session summary",
    finder.EPISODE: "episode",
    finder.ENTRY: "inbox entry",
}
# Statuses that need no saying: a row in force.
_IN_FORCE = {"active", "pending", "ended", "open"}


def marked(parts: tuple[tuple[str, bool], ...]) -> SafeString:
    """An excerpt's pieces as HTML: every piece escaped, the matched words in `<mark>`."""
    return mark_safe(  # every piece is escaped here
        "".join(f"<mark>{escape(text)}</mark>" if hit else str(escape(text)) for text, hit in parts)
    )


def _shown(project: Project, hits: list[finder.Hit]) -> list[dict[str, Any]]:
    """The hits as the page shows them: each with the dashboard page that holds its row (none for an
    episode, which has no page: its run's compilations instead), its excerpt as HTML and its reasons."""
    decision_url = urls_by_id("review:decision", project.slug)
    entry_url = urls_by_id("review:entry", project.slug)
    memory_list = reverse("review:memory", args=[project.slug])
    told = reverse("review:compilations", args=[project.slug])
    sessions = reverse("review:sessions", args=[project.slug])
    shown = []
    for hit in hits:
        url, run_url = "", ""
        if hit.kind == finder.DECISION:
            url = decision_url(hit.id)
        elif hit.kind == finder.ENTRY:
            url = entry_url(hit.id)
        elif hit.kind == finder.EPISODE:
            run_url = f"{told}?{urlencode({'agent': hit.agent, 'run': hit.run_id})}"
        elif hit.kind == finder.MEMORY or hit.status != "open":
            url = f"{memory_list}?memory={hit.id}"  # an ended session's summary is kept as a memory
        else:
            url = sessions
        shown.append(
            {
                "hit": hit,
                "label": HIT_LABELS[hit.kind],
                "url": url,
                "run_url": run_url,
                # A short row's excerpt is its title again: the title alone says it.
                "excerpt": "" if "".join(text for text, _ in hit.parts) == hit.title else marked(hit.parts),
                "said_status": "" if hit.status in _IN_FORCE else hit.status,
                "why": format_html_join(
                    "; ", "{} in {}", ((", ".join(why.words), why.field) for why in hit.why)
                ),
            }
        )
    return shown


def _kind_links(project: Project, q: str, kind: str, inactive: bool) -> list[dict[str, Any]]:
    base = reverse("review:search", args=[project.slug])
    links = []
    for value, label in KIND_LABELS.items():
        params = {"q": q, **({"kind": value} if value else {}), **({"inactive": "1"} if inactive else {})}
        links.append({"label": label, "url": f"{base}?{urlencode(params)}", "current": value == kind})
    return links


@require_GET
@login_required
def search_page(request: HtmxHttpRequest, project: str) -> HttpResponse:
    access = project_for_user(request, project)
    q = request.GET.get("q", "")
    kind = request.GET.get("kind", "")
    inactive = request.GET.get("inactive", "") in ("1", "true", "on")
    if kind not in KIND_LABELS:
        kind = ""
    hits: list[finder.Hit] = []
    error = ""
    if q.strip():
        try:
            hits = finder.find(
                access.project,
                agent_name=None,
                coordinator=True,
                q=q,
                limit=LIMIT,
                kinds=[kind] if kind else None,
                inactive=inactive,
            )
        except services.LedgerError as exc:
            error = exc.message
    base = reverse("review:search", args=[access.project.slug])
    toggled = {"q": q, **({"kind": kind} if kind else {}), **({} if inactive else {"inactive": "1"})}
    context = project_context(
        access,
        nav="search",
        search_q=q,
        q=q,
        words=terms(q) if q.strip() and not error else [],
        kind=kind,
        kinds=_kind_links(access.project, q, kind, inactive),
        inactive=inactive,
        inactive_url=f"{base}?{urlencode(toggled)}",
        hits=_shown(access.project, hits),
        at_limit=len(hits) == LIMIT,
        limit=LIMIT,
        error=error,
    )
    return render_list(request, "review/search.html", "search-results", context)
