"""Agents' memory: the list, and a memory's importance, tags, archiving and pin; near-duplicates merged
or dismissed (docs/dashboard.md).

The list shows expired memories, marked, unless the filter hides them; superseded ones when asked, each
linked to what replaced it; `?memory=<id>` lists that one memory (what such a link opens).

An action answers an htmx request with the memory's row (a refusal or a note in it) and a plain form
post with a redirect back to the list it came from.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import format_html_join
from django.views.decorators.http import require_GET, require_POST

from ledger.actions import memory as memories
from ledger.actions.shapes import MemoryMergeIn, MemoryPatchIn
from ledger.models import AgentMemory, Importance, MemoryStatus, Project
from review.access import ProjectAccess, in_project, project_for_user
from review.filters import MemoryFilter
from review.forms import MemoryEditForm, MemoryMergeForm, MemoryPinForm, problems
from review.inspect import flags
from review.views.base import (
    HtmxHttpRequest,
    attempt,
    hidden_fields,
    paginate,
    project_context,
    redirect_back,
    render_list,
    submit,
    urls_by_id,
)

# "Flagged only" reads at most this many of the most recent matching memories.
FLAGGED_SCAN = 2000


def _with_flags(items: list[Any]) -> list[Any]:
    """`items` (memories) each with `flags`, what a reviewer should know about its content."""
    for item in items:
        if not hasattr(item, "flags"):
            item.flags = flags(item.content)
    return items


def _as_rows(project: Project, items: list[Any]) -> list[Any]:
    """`items` (memories) as the list shows them: their flags, the links of their row's actions (built
    from one reverse each, not one per row) and the options of their importance select."""
    names = ["memory_edit", "memory_pin", "memory_archive", "memory_merge", "memory_dismiss"]
    listed = reverse("review:memory", args=[project.slug])
    edit_of, pin_of, archive_of, merge_of, dismiss_of = (
        urls_by_id(f"review:{name}", project.slug) for name in names
    )
    # The importance select's options, once for each importance a row can have.
    options = {
        chosen: format_html_join(
            "",
            '<option value="{}"{}>{}</option>',
            ((value, " selected" if value == chosen else "", label) for value, label in Importance.choices),
        )
        for chosen in Importance.values
    }
    for item in _with_flags(items):
        item.importance_options = options.get(item.importance, options[Importance.MEDIUM])
        item.edit_url, item.pin_url, item.archive_url = edit_of(item.pk), pin_of(item.pk), archive_of(item.pk)
        item.merge_url, item.dismiss_url = merge_of(item.pk), dismiss_of(item.pk)
        item.agent_url = f"{listed}?{urlencode({'agent': item.agent.name})}"
        item.superseded_by_url = f"{listed}?memory={item.superseded_by_id}"
        item.similar_to_url = f"{listed}?memory={item.similar_to_id}"
    return items


@require_GET
@login_required
def memory_list(request: HtmxHttpRequest, project: str) -> HttpResponse:
    access = project_for_user(request, project)
    base = (
        AgentMemory.objects.filter(project=access.project)
        .select_related("agent")
        .order_by("-created_at", "-id")
    )
    one = request.GET.get("memory", "")
    if one:
        base = base.filter(pk=int(one)) if one.isascii() and one.isdigit() and len(one) <= 18 else base.none()
    params = request.GET.copy()
    if not params.get("expired"):
        params["expired"] = "all"  # a person sees expired memories, marked, unless told to hide them
    if one:
        params.setdefault("status", "all")  # the memory a link names, whatever its status
    filterset = MemoryFilter(params, queryset=base)
    valid = filterset.is_valid()
    rows = filterset.qs if valid else AgentMemory.objects.none()
    flagged_only = valid and bool(filterset.form.cleaned_data.get("flagged"))
    recent: list[AgentMemory] = []
    if flagged_only:
        # Flags are computed from the text: read a bounded number of recent rows and keep the flagged.
        recent = list(rows[:FLAGGED_SCAN])
    page = paginate(
        [m for m in _with_flags(recent) if m.flags] if flagged_only else rows, request.GET.get("page")
    )
    page.object_list = _as_rows(access.project, list(page.object_list))
    context = project_context(
        access,
        nav="memory",
        filter=filterset,
        page=page,
        params=request.GET,
        row_fields=hidden_fields(request, next=request.get_full_path()),
        flagged_only=flagged_only,
        scanned=len(recent),
        scan_limit=FLAGGED_SCAN,
    )
    return render_list(request, "review/memory.html", "memory-list", context)


def _said(before: AgentMemory, after: AgentMemory | None) -> str:
    """What an edit of `before` did, now that it is `after` (nothing when it was refused)."""
    if after is None:
        return ""
    if after.updated_at == before.updated_at:
        return "Nothing to save: unchanged."
    if after.status == MemoryStatus.ARCHIVED:
        return f"Memory {after.pk} archived."
    return f"Memory {after.pk} saved."


def _answer(
    request: HtmxHttpRequest, access: ProjectAccess, item: AgentMemory, *, note: str, error: str
) -> HttpResponse:
    """The memory's row for htmx (the refusal or the note in it), else the list it came from with a
    message."""
    if request.htmx:
        item = AgentMemory.objects.select_related("agent").get(pk=item.pk)
        _as_rows(access.project, [item])
        return render(
            request,
            "review/memory.html#memory-row",
            project_context(
                access,
                item=item,
                row_error=error,
                row_note=note,
                row_fields=hidden_fields(request, next=request.get_full_path()),
            ),
        )
    memory = reverse("review:memory", args=[access.project.slug])
    return redirect_back(request, memory, error=error, success=note)


@require_POST
@login_required
def memory_edit(request: HtmxHttpRequest, project: str, memory_id: int) -> HttpResponse:
    access = project_for_user(request, project, act=True)
    item = in_project(access, AgentMemory, memory_id)
    form = MemoryEditForm(request.POST)
    edited = _edit(request, access, item, form)
    return _answer(request, access, item, note=_said(item, edited), error=" ".join(problems(form)))


def _edit(
    request: HtmxHttpRequest, access: ProjectAccess, item: AgentMemory, form: forms.Form
) -> AgentMemory | None:
    """The memory edited with what `form` cleaned (its fields are `memory_edit`'s), or None when the
    form or the service refused it (the form then says why)."""
    return submit(
        form,
        lambda data: memories.edit_as(access.caller, item, MemoryPatchIn(**data)),
    )


@require_POST
@login_required
def memory_archive(request: HtmxHttpRequest, project: str, memory_id: int) -> HttpResponse:
    access = project_for_user(request, project, act=True)
    item = in_project(access, AgentMemory, memory_id)
    archived, error = attempt(
        lambda: memories.edit_as(access.caller, item, MemoryPatchIn(status=MemoryStatus.ARCHIVED))
    )
    return _answer(request, access, item, note=_said(item, archived), error=error)


@require_POST
@login_required
def memory_pin(request: HtmxHttpRequest, project: str, memory_id: int) -> HttpResponse:
    access = project_for_user(request, project, act=True)
    item = in_project(access, AgentMemory, memory_id)
    form = MemoryPinForm(request.POST)
    pinned = _edit(request, access, item, form)
    note = ""
    if pinned is not None:
        note = (
            f"Memory {item.pk} pinned: it never expires." if pinned.pinned else f"Memory {item.pk} unpinned."
        )
    return _answer(request, access, item, note=note, error=" ".join(problems(form)))


@require_POST
@login_required
def memory_merge(request: HtmxHttpRequest, project: str, memory_id: int) -> HttpResponse:
    access = project_for_user(request, project, act=True)
    item = in_project(access, AgentMemory, memory_id)
    form = MemoryMergeForm(request.POST)
    kept = submit(
        form,
        lambda data: memories.merge_similar_as(access.caller, item, MemoryMergeIn(keep=data["keep"])),
    )
    note = ""
    if kept is not None:
        gone = item.similar_to_id if kept.pk == item.pk else item.pk
        note = f"Merged: memory {kept.pk} kept, memory {gone} superseded by it."
    return _answer(request, access, item, note=note, error=" ".join(problems(form)))


@require_POST
@login_required
def memory_dismiss_similar(request: HtmxHttpRequest, project: str, memory_id: int) -> HttpResponse:
    access = project_for_user(request, project, act=True)
    item = in_project(access, AgentMemory, memory_id)
    dismissed, error = attempt(lambda: memories.dismiss_similar_as(access.caller, item))
    note = f"Memory {item.pk} is no longer flagged as a near-duplicate." if dismissed is not None else ""
    return _answer(request, access, item, note=note, error=error)
