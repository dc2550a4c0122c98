"""Taking back a decision on an entry, and settling competing proposals in one step (docs/dashboard.md
"Undo" and "Competing proposals").

Undo answers like the inbox's own actions (`review.views.inbox._answer`): the row again for htmx, a
redirect back with a message for a plain form post. Resolving is a plain form post from the entry's
page, answered with a redirect back to it.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_POST

from ledger import services
from ledger.actions import inbox
from ledger.models import InboxEntry
from review.access import project_for_user
from review.forms import BULK_LIMIT, REASON_MAX_LENGTH, IdsField, id_field, problems, seen_field
from review.views.base import HtmxHttpRequest, attempt, redirect_back
from review.views.inbox import _answer, ask_before_merging, merge_question


@require_POST
@login_required
def entry_undo(request: HtmxHttpRequest, project: str, entry_id: int) -> HttpResponse:
    access = project_for_user(request, project, act=True)
    done, error = attempt(lambda: inbox.undo_as(access.caller, entry_id))
    return _answer(request, access, entry_id, action="undo", done=done, error=error)


class ResolveForm(forms.Form):
    """Merge one entry, the version the page showed (`seen`), reject the competitors ticked (`reject`)
    with one `reason`, and, when the coordinator chose it, supersede an active decision (`supersede`)
    by the merged one."""

    reject = IdsField(
        limit=BULK_LIMIT,
        required=False,
        error_messages={"too_many": "Reject at most %(limit)d entries at a time."},
    )
    reason = forms.CharField(
        required=False,
        max_length=REASON_MAX_LENGTH,
        error_messages={"max_length": "reason: must be at most %(limit_value)d characters"},
    )
    supersede = id_field("supersede", "decision")
    confirm_flagged = forms.BooleanField(required=False)
    seen = seen_field()

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("reject") and not data.get("reason"):
            self.add_error("reason", "reason: say why the others are rejected")
        return data


def _resolved(entry: InboxEntry, data: dict[str, Any]) -> str:
    said = [f"Entry {entry.pk} merged"]
    others = [pk for pk in data["reject"] if pk != entry.pk]
    if others:
        said.append(f"{', '.join(f'#{pk}' for pk in others)} rejected")
    if data.get("supersede"):
        said.append(f"decision #{data['supersede']} superseded by #{entry.decision_id}")
    return "; ".join(said) + "."


@require_POST
@login_required
def entry_resolve(request: HtmxHttpRequest, project: str, entry_id: int) -> HttpResponse:
    """Merge this entry and reject the other competitors with the reason given, all or nothing. A
    flagged entry is merged once the reviewer confirms it (`ask_before_merging`)."""
    access = project_for_user(request, project, act=True)
    back = reverse("review:entry", args=[access.project.slug, entry_id])
    form = ResolveForm(request.POST)
    if not form.is_valid():
        return redirect_back(request, back, error=" ".join(problems(form)))
    data = form.cleaned_data
    try:
        entry = inbox.resolve_as(
            access.caller,
            entry_id,
            reject=data["reject"],
            reason=data["reason"],
            supersede=data["supersede"],
            confirm_flagged=data["confirm_flagged"],
            seen=data["seen"] or None,
        )
    except services.NotFound as exc:
        raise Http404(exc.message) from exc
    except services.LedgerError as exc:
        question = merge_question(exc, confirmed=data["confirm_flagged"])
        if question is None:
            return redirect_back(request, back, error=exc.message)
        carry = {
            "reject": data["reject"],
            "reason": [data["reason"]],
            "supersede": [data["supersede"]] if data["supersede"] else [],
        }
        url = reverse("review:entry_resolve", args=[access.project.slug, entry_id])
        return ask_before_merging(request, access, entry_id, question, action=url, carry=carry)
    return redirect_back(request, back, success=_resolved(entry, data))
