"""Decisions: the list (and retyping from it), recording one, and a decision's page with its history
and the forms that edit, supersede and archive it (docs/dashboard.md).

A refused form (a decision's text, a replacement written on the spot, a new decision, the decision
chosen to supersede it) answers 400 with the page and the form as typed, its errors beside the fields
they are about (templates/review/_decision_fields.html). The other refusals (retyping, archiving) are
messages, and go back to where they came from.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import QuerySet
from django.http import HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from ledger import selectors
from ledger.actions import decisions
from ledger.actions.shapes import DecisionCreateIn, DecisionPatchIn
from ledger.models import AuditEvent, Decision, DecisionStatus, DecisionType, Project
from review.access import ProjectAccess, in_project, project_for_user
from review.diff import revision_diffs
from review.filters import DecisionFilter
from review.forms import DecisionForm, DecisionTextForm, RetypeForm, SupersedeForm
from review.neighbours import Neighbours, neighbours
from review.views.base import (
    HtmxHttpRequest,
    attempt,
    paginate,
    place_links,
    project_context,
    refused,
    render_list,
    submit,
    with_query,
)

# The "supersede by an existing decision" menu lists this many of the most recent active decisions.
SUPERSEDE_CHOICES = 200


def decision_queryset(project: Project) -> QuerySet[Decision]:
    """The decision list's rows in its order, newest first: the list and each decision's page (its
    previous and next) read them alike."""
    return Decision.objects.filter(project=project).select_related("agent").order_by("-created_at", "-id")


def _render_decisions(
    request: HtmxHttpRequest,
    access: ProjectAccess,
    params: QueryDict,
    *,
    status: int = 200,
    record: DecisionForm | None = None,
) -> HttpResponse:
    """The decision list filtered by `params`; `record` is the "record a decision" form as typed."""
    filterset = DecisionFilter(params, queryset=decision_queryset(access.project))
    rows = filterset.qs if filterset.is_valid() else Decision.objects.none()
    context = project_context(
        access,
        nav="decisions",
        filter=filterset,
        page=paginate(rows, params.get("page")),
        types=DecisionType.choices,
        params=params,
        query=params.urlencode(),
        record=record or DecisionForm(),
    )
    return render_list(request, "review/decisions.html", "decision-list", context, status=status)


@require_GET
@login_required
def decision_list(request: HtmxHttpRequest, project: str) -> HttpResponse:
    access = project_for_user(request, project)
    return _render_decisions(request, access, request.GET)


def _decision_list_url(target: str, listing: str) -> str:
    """`target` when it is the decision list with a query string (its filters), else the bare list.

    The query string is parsed and encoded again, so the redirect never leaves the list.
    """
    path, _, query = target.partition("?")
    if path != listing or not query:
        return listing
    return f"{listing}?{QueryDict(query).urlencode()}"


def _retyped(changed: list[Decision], new_type: str) -> str:
    if not changed:
        return f"Nothing changed: the selected decisions are already {new_type}."
    if len(changed) == 1:
        return f"1 decision is now {new_type}."
    return f"{len(changed)} decisions are now {new_type}."


@require_POST
@login_required
def decision_retype(request: HtmxHttpRequest, project: str) -> HttpResponse:
    """Give the selected decisions one type: an adopted log arrives `technical` until someone sorts it."""
    access = project_for_user(request, project, act=True)
    listing = _decision_list_url(
        request.POST.get("next", ""), reverse("review:decisions", args=[access.project.slug])
    )
    form = RetypeForm(request.POST)
    changed = submit(
        form,
        lambda data: decisions.retype_as(access.caller, data["ids"], data["type"]),
    )
    refused(request, form)
    if changed is not None:
        messages.success(request, _retyped(changed, form.cleaned_data["type"]))
    if request.htmx:
        # The list again, with the filters it was showing.
        params = QueryDict(listing.partition("?")[2])
        return _render_decisions(request, access, params, status=200 if form.is_valid() else 400)
    return HttpResponseRedirect(listing)


def _create(access: ProjectAccess, data: dict[str, Any], supersedes: list[int]) -> Decision:
    """A new active decision from `DecisionForm`'s data, by the agent named there or the reviewer."""
    caller = access.caller
    payload = DecisionCreateIn(
        agent_name=data["agent_name"] or caller.name,
        type=data["type"],
        title=data["title"],
        content=data["content"],
        rationale=data["rationale"],
        supersedes=supersedes,
    )
    return decisions.create_as(caller, payload)


@require_POST
@login_required
def decision_new(request: HtmxHttpRequest, project: str) -> HttpResponse:
    access = project_for_user(request, project, act=True)
    form = DecisionForm(request.POST)
    decision = submit(form, lambda data: _create(access, data, []))
    if decision is None:
        # The list with the form as typed and its errors, rather than losing what was written.
        return _render_decisions(request, access, QueryDict(), status=400, record=form)
    messages.success(request, "Decision recorded.")
    return _to_decision(request, access, decision.pk)


def _decision(access: ProjectAccess, decision_id: int) -> Decision:
    """The decision, with the inbox entry it was merged from (if any) and that entry's agent."""
    rows = Decision.objects.select_related("agent", "superseded_by", "source_entry__agent")
    return in_project(access, rows, decision_id)


def _place(access: ProjectAccess, decision: Decision, params: QueryDict) -> Neighbours:
    """The decision's neighbours in the decision list filtered by `params`, in the list's order."""
    filterset = DecisionFilter(params, queryset=decision_queryset(access.project))
    if not filterset.is_valid():
        return Neighbours(None, None, None, 0)
    return neighbours(filterset.qs, decision)


def _links(access: ProjectAccess, place: Neighbours, query: str) -> dict[str, str]:
    """The URLs of the list and of the decisions around this one, each with the list's query string."""
    return place_links(place, access.project, "review:decision", "review:decisions", query)


def _to_decision(request: HtmxHttpRequest, access: ProjectAccess, decision_id: int) -> HttpResponseRedirect:
    """A decision's page, keeping the list's filters the page was opened with (its forms post to a URL
    carrying the page's query string)."""
    url = reverse("review:decision", args=[access.project.slug, decision_id])
    return HttpResponseRedirect(with_query(url, request.GET.urlencode()))


def _decision_page(
    request: HtmxHttpRequest,
    access: ProjectAccess,
    decision: Decision,
    *,
    status: int = 200,
    edit: DecisionTextForm | None = None,
    replacement: DecisionForm | None = None,
    supersede: SupersedeForm | None = None,
) -> HttpResponse:
    """The decision page; `edit`, `replacement` and `supersede` are its forms as sent, after a refusal."""
    replaced, successors = selectors.decision_chain(decision)
    choices = (
        Decision.objects.filter(project=access.project, status=DecisionStatus.ACTIVE)
        .exclude(pk=decision.pk)
        .order_by("-created_at", "-id")[:SUPERSEDE_CHOICES]
    )
    text = {"title": decision.title, "content": decision.content, "rationale": decision.rationale}
    query = request.GET.urlencode()
    place = _place(access, decision, request.GET)
    return render(
        request,
        "review/decision.html",
        project_context(
            access,
            nav="decisions",
            decision=decision,
            revisions=revision_diffs(list(decision.revisions.all()), decision),
            place=place,
            links=_links(access, place, query),
            query=query,
            replaced=replaced,
            successors=successors,
            source_entry=getattr(decision, "source_entry", None),  # read with the decision
            choices=choices,
            types=DecisionType.choices,
            runs=selectors.runs_told_decision(decision, limit=50),
            trail=AuditEvent.objects.filter(object_type="decision", object_id=decision.pk),
            edit=edit or DecisionTextForm(initial=text),
            replacement=replacement or DecisionForm(initial={"type": decision.type}),
            supersede=supersede or SupersedeForm(),
        ),
        status=status,
    )


@require_GET
@login_required
def decision_page(request: HtmxHttpRequest, project: str, decision_id: int) -> HttpResponse:
    access = project_for_user(request, project)
    return _decision_page(request, access, _decision(access, decision_id))


@require_POST
@login_required
def decision_edit(request: HtmxHttpRequest, project: str, decision_id: int) -> HttpResponse:
    access = project_for_user(request, project, act=True)
    decision = _decision(access, decision_id)
    form = DecisionTextForm(request.POST)
    edited = submit(
        form,
        lambda data: decisions.update_as(access.caller, decision.pk, DecisionPatchIn(**data)),
    )
    if edited is None:
        return _decision_page(request, access, decision, status=400, edit=form)
    if edited.updated_at == decision.updated_at:
        messages.success(request, "Nothing to save: the text is unchanged.")
    else:
        messages.success(request, "Saved. The previous text is kept as a revision.")
    return _to_decision(request, access, decision.pk)


@require_POST
@login_required
def decision_archive(request: HtmxHttpRequest, project: str, decision_id: int) -> HttpResponse:
    access = project_for_user(request, project, act=True)
    decision = _decision(access, decision_id)
    archived, error = attempt(
        lambda: decisions.update_as(
            access.caller, decision.pk, DecisionPatchIn(status=DecisionStatus.ARCHIVED)
        )
    )
    if archived is None:
        messages.error(request, error)
    else:
        messages.success(request, "Archived.")
    return _to_decision(request, access, decision.pk)


@require_POST
@login_required
def decision_supersede(request: HtmxHttpRequest, project: str, decision_id: int) -> HttpResponse:
    """Supersede by an existing active decision (`superseded_by`), or by a new one written here
    (`mode=new`), which a refusal shows again as typed rather than losing it."""
    access = project_for_user(request, project, act=True)
    decision = _decision(access, decision_id)
    if request.POST.get("mode") == "new":
        replacement = DecisionForm(request.POST)
        new = submit(replacement, lambda data: _create(access, data, [decision.pk]))
        if new is None:
            return _decision_page(request, access, decision, status=400, replacement=replacement)
        messages.success(request, "Superseded. The chain is shown below.")
        return _to_decision(request, access, new.pk)
    form = SupersedeForm(request.POST)
    superseded = submit(
        form,
        lambda data: decisions.update_as(
            access.caller, decision.pk, DecisionPatchIn(superseded_by_id=data["superseded_by"])
        ),
    )
    if superseded is None:
        return _decision_page(request, access, decision, status=400, supersede=form)
    messages.success(request, "Superseded. The chain is shown below.")
    return _to_decision(request, access, decision.pk)
