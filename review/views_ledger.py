"""The dashboard's ledger pages: decisions and their history, memory, sessions, what agents were told,
and the mirror (docs/dashboard.md). Same rules as `review.views`: access checks first, writes through
services, post/redirect/get for plain forms.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from ledger import mirror, selectors, services
from ledger.models import (
    AgentMemory,
    AuditEvent,
    Compilation,
    Decision,
    DecisionStatus,
    DecisionType,
    Importance,
    MemoryStatus,
    MirrorKind,
    MirrorRun,
    Session,
)
from ledger.selectors import runs_told_decision
from review.access import ProjectAccess, project_for_user
from review.filters import DecisionFilter, MemoryFilter
from review.inspect import flags
from review.views import PAGE_SIZE, _back, project_context, selected_ids

SUPERSEDE_CHOICES = 200
RETYPE_LIMIT = 500
# "Flagged only" on the memory page reads at most this many of the most recent matching memories.
FLAGGED_SCAN = 2000
# The mirror page lists this many recent import and export runs.
EARLIER_RUNS = 20


def _trail(object_type: str, object_id: int) -> Any:
    return AuditEvent.objects.filter(object_type=object_type, object_id=object_id)


def _refused(request: HttpRequest, exc: services.LedgerError) -> None:
    messages.error(request, exc.message)


# --- decisions ----------------------------------------------------------------------------------


@require_GET
@login_required
def decisions(request: HttpRequest, project: str) -> HttpResponse:
    access = project_for_user(request, project)
    return _render_decisions(request, access)


def _render_decisions(request: HttpRequest, access: ProjectAccess, *, status: int = 200) -> HttpResponse:
    base = (
        Decision.objects.filter(project=access.project).select_related("agent").order_by("-created_at", "-id")
    )
    filterset = DecisionFilter(request.GET, queryset=base)
    rows = filterset.qs if filterset.is_valid() else Decision.objects.none()
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    template = "review/decisions.html#decision-list" if request.htmx else "review/decisions.html"  # type: ignore[attr-defined]
    context = project_context(
        access,
        nav="decisions",
        filter=filterset,
        page=page,
        types=DecisionType.choices,
        query=request.GET.urlencode(),
    )
    return render(request, template, context, status=status)


def _decision_list_url(target: str, listing: str) -> str:
    """`target` when it is the decision list with a query string (its filters), else the bare list.

    The query string is parsed and encoded again, so the redirect never leaves the list.
    """
    path, _, query = target.partition("?")
    if path != listing or not query:
        return listing
    return f"{listing}?{QueryDict(query).urlencode()}"


@require_POST
@login_required
def decision_retype(request: HttpRequest, project: str) -> HttpResponse:
    """Give the selected decisions one type: an adopted log arrives `technical` until someone sorts it."""
    access = project_for_user(request, project, act=True)
    listing = _decision_list_url(
        request.POST.get("next", ""), reverse("review:decisions", args=[access.project.slug])
    )
    raw = request.POST.getlist("ids")
    ids = selected_ids(raw)
    new_type = request.POST.get("type", "")
    problem = ""
    changed: list[Decision] = []
    if len(raw) > RETYPE_LIMIT:
        problem = f"Select at most {RETYPE_LIMIT} decisions at a time."
    elif not ids:
        problem = "Select at least one decision to change its type."
    elif not new_type:
        problem = "Choose the type to give the selected decisions."
    else:
        try:
            changed = services.decisions_retype(
                project=access.project,
                decision_ids=ids,
                type=new_type,
                by=request.user.get_username(),
                via="dashboard",
            )
        except services.LedgerError as exc:
            problem = exc.message
    if problem:
        messages.error(request, problem)
    elif not changed:
        messages.success(request, f"Nothing changed: the selected decisions are already {new_type}.")
    elif len(changed) == 1:
        messages.success(request, f"1 decision is now {new_type}.")
    else:
        messages.success(request, f"{len(changed)} decisions are now {new_type}.")
    if request.htmx:  # type: ignore[attr-defined]
        # The list again, with the filters it was showing.
        request.GET = QueryDict(listing.partition("?")[2])  # type: ignore[assignment]
        return _render_decisions(request, access, status=400 if problem else 200)
    return HttpResponseRedirect(listing)


def _decision_page(
    request: HttpRequest,
    access: ProjectAccess,
    decision: Decision,
    status: int = 200,
    draft: Any = None,
) -> HttpResponse:
    """The decision page; `draft` refills the "write the replacement" form after a refusal."""
    replaced, successors = selectors.decision_chain(decision)
    choices = (
        Decision.objects.filter(project=access.project, status=DecisionStatus.ACTIVE)
        .exclude(pk=decision.pk)
        .order_by("-created_at", "-id")[:SUPERSEDE_CHOICES]
    )
    source_entry = getattr(decision, "source_entry", None)
    return render(
        request,
        "review/decision.html",
        project_context(
            access,
            nav="decisions",
            decision=decision,
            revisions=decision.revisions.all(),
            replaced=replaced,
            successors=successors,
            source_entry=source_entry,
            choices=choices,
            types=DecisionType.choices,
            runs=runs_told_decision(decision, limit=50),
            trail=_trail("decision", decision.pk),
            draft=draft,
        ),
        status=status,
    )


def _decision(access: ProjectAccess, decision_id: int) -> Decision:
    return get_object_or_404(
        Decision.objects.select_related("agent", "superseded_by"), project=access.project, pk=decision_id
    )


@require_GET
@login_required
def decision_page(request: HttpRequest, project: str, decision_id: int) -> HttpResponse:
    access = project_for_user(request, project)
    return _decision_page(request, access, _decision(access, decision_id))


@require_POST
@login_required
def decision_edit(request: HttpRequest, project: str, decision_id: int) -> HttpResponse:
    access = project_for_user(request, project, act=True)
    decision = _decision(access, decision_id)
    try:
        edited = services.decision_edit(
            project=access.project,
            decision_id=decision.pk,
            by=request.user.get_username(),
            via="dashboard",
            title=request.POST.get("title", decision.title),
            content=request.POST.get("content", decision.content),
            rationale=request.POST.get("rationale", decision.rationale),
        )
        if edited.updated_at == decision.updated_at:
            messages.success(request, "Nothing to save: the text is unchanged.")
        else:
            messages.success(request, "Saved. The previous text is kept as a revision.")
    except services.LedgerError as exc:
        _refused(request, exc)
    return redirect("review:decision", access.project.slug, decision.pk)


@require_POST
@login_required
def decision_archive(request: HttpRequest, project: str, decision_id: int) -> HttpResponse:
    access = project_for_user(request, project, act=True)
    decision = _decision(access, decision_id)
    try:
        services.decision_archive(
            project=access.project, decision_id=decision.pk, by=request.user.get_username(), via="dashboard"
        )
        messages.success(request, "Archived.")
    except services.LedgerError as exc:
        _refused(request, exc)
    return redirect("review:decision", access.project.slug, decision.pk)


@require_POST
@login_required
def decision_supersede(request: HttpRequest, project: str, decision_id: int) -> HttpResponse:
    """Supersede by an existing active decision (`superseded_by`), or by a new one written here."""
    access = project_for_user(request, project, act=True)
    decision = _decision(access, decision_id)
    by = request.user.get_username()
    target = decision.pk
    try:
        if request.POST.get("mode") == "new":
            new = services.decision_create(
                project=access.project,
                agent_name=request.POST.get("agent_name") or by,
                type=request.POST.get("type", decision.type),
                title=request.POST.get("title", ""),
                content=request.POST.get("content", ""),
                rationale=request.POST.get("rationale", ""),
                supersedes=[decision.pk],
                by=by,
                via="dashboard",
            )
            target = new.pk
        else:
            raw = request.POST.get("superseded_by", "")
            if not raw.isdigit():
                raise services.Invalid("choose the decision that replaces this one")
            services.decision_supersede(
                project=access.project,
                decision_id=decision.pk,
                superseded_by_id=int(raw),
                by=by,
                via="dashboard",
            )
        messages.success(request, "Superseded. The chain is shown below.")
    except services.LedgerError as exc:
        _refused(request, exc)
        if request.POST.get("mode") == "new":
            # Shown again with what was typed, rather than losing a replacement written on the spot.
            return _decision_page(request, access, decision, status=400, draft=request.POST)
    return redirect("review:decision", access.project.slug, target)


@require_POST
@login_required
def decision_new(request: HttpRequest, project: str) -> HttpResponse:
    access = project_for_user(request, project, act=True)
    by = request.user.get_username()
    try:
        decision = services.decision_create(
            project=access.project,
            agent_name=request.POST.get("agent_name") or by,
            type=request.POST.get("type", ""),
            title=request.POST.get("title", ""),
            content=request.POST.get("content", ""),
            rationale=request.POST.get("rationale", ""),
            by=by,
            via="dashboard",
        )
    except services.LedgerError as exc:
        _refused(request, exc)
        return redirect("review:decisions", access.project.slug)
    messages.success(request, "Decision recorded.")
    return redirect("review:decision", access.project.slug, decision.pk)


# --- memory -------------------------------------------------------------------------------------


@require_GET
@login_required
def memory(request: HttpRequest, project: str) -> HttpResponse:
    access = project_for_user(request, project)
    base = (
        AgentMemory.objects.filter(project=access.project)
        .select_related("agent")
        .order_by("-created_at", "-id")
    )
    filterset = MemoryFilter(request.GET, queryset=base)
    valid = filterset.is_valid()
    rows = filterset.qs if valid else AgentMemory.objects.none()
    flagged_only = valid and bool(filterset.form.cleaned_data.get("flagged"))
    scanned = 0
    if flagged_only:
        # Flags are computed from the text: read a bounded number of recent rows and keep the flagged.
        recent = list(rows[:FLAGGED_SCAN])
        scanned = len(recent)
        rows = [item for item in _with_flags(recent) if item.flags]  # type: ignore[attr-defined]
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    page.object_list = _with_flags(list(page.object_list))
    return render(
        request,
        "review/memory.html",
        project_context(
            access,
            nav="memory",
            filter=filterset,
            page=page,
            importances=Importance.choices,
            flagged_only=flagged_only,
            scanned=scanned,
            scan_limit=FLAGGED_SCAN,
        ),
    )


def _with_flags(items: list[Any]) -> list[Any]:
    """`items` (memories) each with `flags`, what a reviewer should know about its content."""
    for item in items:
        if not hasattr(item, "flags"):
            item.flags = flags(item.content)
    return items


def _memory_action(request: HttpRequest, project: str, memory_id: int, **changes: Any) -> HttpResponse:
    access = project_for_user(request, project, act=True)
    item = get_object_or_404(AgentMemory, project=access.project, pk=memory_id)
    before = item.updated_at
    error = ""
    try:
        item = services.memory_edit(
            project=access.project,
            memory_id=item.pk,
            by=request.user.get_username(),
            via="dashboard",
            **changes,
        )
    except services.LedgerError as exc:
        error = exc.message
    if error:
        note = ""
    elif item.updated_at == before:
        note = "Nothing to save: unchanged."
    elif item.status == MemoryStatus.ARCHIVED:
        note = f"Memory {item.pk} archived."
    else:
        note = f"Memory {item.pk} saved."
    if request.htmx:  # type: ignore[attr-defined]
        item = AgentMemory.objects.select_related("agent").get(pk=item.pk)
        _with_flags([item])
        return render(
            request,
            "review/memory.html#memory-row",
            project_context(
                access, item=item, row_error=error, row_note=note, importances=Importance.choices
            ),
        )
    if error:
        messages.error(request, error)
    else:
        messages.success(request, note)
    return _back(request, reverse("review:memory", args=[access.project.slug]))


@require_POST
@login_required
def memory_edit(request: HttpRequest, project: str, memory_id: int) -> HttpResponse:
    return _memory_action(
        request,
        project,
        memory_id,
        importance=request.POST.get("importance") or None,
        tags=request.POST.get("tags"),
    )


@require_POST
@login_required
def memory_archive(request: HttpRequest, project: str, memory_id: int) -> HttpResponse:
    return _memory_action(request, project, memory_id, status="archived")


# --- sessions and what agents were told ---------------------------------------------------------


@require_GET
@login_required
def sessions(request: HttpRequest, project: str) -> HttpResponse:
    access = project_for_user(request, project)
    page = Paginator(Session.objects.filter(project=access.project), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    page.object_list = list(page.object_list)
    for session in page.object_list:
        issues = [str(issue) for issue in session.active_issues or []]
        session.flags = flags(session.focus_area, *issues, session.summary)  # type: ignore[attr-defined]
    return render(request, "review/sessions.html", project_context(access, nav="sessions", page=page))


@require_GET
@login_required
def compilations(request: HttpRequest, project: str) -> HttpResponse:
    access = project_for_user(request, project)
    rows = Compilation.objects.filter(project=access.project).select_related("agent").defer("text")
    agent = request.GET.get("agent", "").strip()
    run = request.GET.get("run", "").strip()
    if agent:
        rows = rows.filter(agent__key=selectors.agent_filter_key(agent))
    if run:
        rows = rows.filter(run_id=run)
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(
        request,
        "review/compilations.html",
        project_context(access, nav="compilations", page=page, agent=agent, run=run),
    )


@require_GET
@login_required
def compilation_page(request: HttpRequest, project: str, compilation_id: int) -> HttpResponse:
    access = project_for_user(request, project)
    compilation = get_object_or_404(
        Compilation.objects.select_related("agent", "session"), project=access.project, pk=compilation_id
    )
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


# --- mirror -------------------------------------------------------------------------------------


@require_GET
@login_required
def mirror_page(request: HttpRequest, project: str) -> HttpResponse:
    access = project_for_user(request, project)
    project_runs = MirrorRun.objects.filter(project=access.project).order_by("-created_at", "-id")
    runs = {kind: project_runs.filter(kind=kind).first() for kind in MirrorKind.values}
    shown = [r.pk for r in runs.values() if r is not None]
    earlier = project_runs.exclude(pk__in=shown)[:EARLIER_RUNS]
    return render(
        request, "review/mirror.html", project_context(access, nav="mirror", runs=runs, earlier=earlier)
    )


def _mirror_action(request: HttpRequest, project: str, kind: str) -> HttpResponse:
    access = project_for_user(request, project, act=True)
    result = mirror.run_and_record(
        access.project, kind, trigger="dashboard", actor=request.user.get_username()
    )
    if result.ok:
        messages.success(request, result.summary())
    else:
        messages.error(request, result.summary())
    return redirect("review:mirror", access.project.slug)


@require_POST
@login_required
def mirror_import(request: HttpRequest, project: str) -> HttpResponse:
    return _mirror_action(request, project, MirrorKind.IMPORT)


@require_POST
@login_required
def mirror_export(request: HttpRequest, project: str) -> HttpResponse:
    return _mirror_action(request, project, MirrorKind.EXPORT)
