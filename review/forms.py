"""The dashboard's forms: the shape of every post that takes input, and of the told-list filter.

They check what a form can see (required fields, lengths, choices, ids) in the words the services use
(`title: must not be empty`), so a reviewer reads the same message whichever layer refused. The ledger's
own rules (a decision must be active to be superseded, tags a row can hold, …) stay in
`ledger.services`; a view adds their refusal to the form as a non-field error.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import forms

from ledger.actions.shapes import MergeIn
from ledger.models import DecisionType, Importance
from ledger.services import TITLE_MAX_LENGTH
from ledger.services.fields import REASON_MAX_LENGTH
from ledger.services.inbox.merge import VERSION_LENGTH
from ledger.values import AGENT_NAME_MAX_LENGTH
from review.models import Density

# Bulk actions on the inbox, and retyping decisions, take at most this many ids at a time.
BULK_LIMIT = 200
RETYPE_LIMIT = 500
# The longest id a form accepts: beyond it a number is no row's id, and the database could refuse it.
ID_MAX_DIGITS = 18


def _text(
    name: str, *, required: bool = True, max_length: int | None = None, strip: bool = True
) -> forms.CharField:
    """A text field whose refusals read like the services' (`content: must not be empty`)."""
    return forms.CharField(
        required=required,
        max_length=max_length,
        strip=strip,
        error_messages={
            "required": f"{name}: must not be empty",
            "max_length": f"{name}: must be at most %(limit_value)d characters, got %(show_value)d",
            "null_characters_not_allowed": f"{name}: must not contain the NUL character (\\u0000)",
        },
    )


def _choice(
    name: str, choices: Iterable[tuple[str, str]], *, required: str | None = None
) -> forms.ChoiceField:
    """A choice field; `required` is the message when nothing was chosen (optional when None)."""
    choices = list(choices)
    allowed = ", ".join(value for value, _ in choices)
    return forms.ChoiceField(
        choices=choices,
        required=required is not None,
        error_messages={
            "required": required or "",
            "invalid_choice": f"{name}: %(value)r is not one of: {allowed}",
        },
    )


def id_field(name: str, kind: str, *, required: str | None = None) -> forms.IntegerField:
    """One row's id; a number no row can have is refused as `{name}: no such {kind}`. `required` is
    the message when none was chosen, and for a value that is no number (optional when None)."""
    unknown = f"{name}: no such {kind}"
    return forms.IntegerField(
        required=required is not None,
        min_value=1,
        max_value=10**ID_MAX_DIGITS - 1,
        error_messages={
            "required": required or "",
            "invalid": required or unknown,
            "min_value": unknown,
            "max_value": unknown,
        },
    )


def _plain_id(value: str) -> bool:
    """A decimal number that can be an id: `²` is a digit to Python, not an id."""
    return value.isascii() and value.isdigit() and 0 < len(value) <= ID_MAX_DIGITS


class IdsField(forms.Field):
    """The ids ticked in a list, each once, in the order sent. A value that is no id is left out (only
    a tampered form sends one); `required` is said when none is left, `too_many` past `limit`."""

    widget = forms.MultipleHiddenInput
    default_error_messages = {"too_many": "Select at most %(limit)d at a time."}

    def __init__(self, *, limit: int, **kwargs: Any) -> None:
        self.limit = limit
        super().__init__(**kwargs)

    def to_python(self, value: Any) -> list[int]:
        if isinstance(value, str):
            value = [value]
        raw = [str(v) for v in value] if isinstance(value, list | tuple) else []
        if len(raw) > self.limit:
            raise forms.ValidationError(
                self.error_messages["too_many"], code="too_many", params={"limit": self.limit}
            )
        return list(dict.fromkeys(int(v) for v in raw if _plain_id(v)))


def seen_field() -> forms.CharField:
    """The version of an entry the reviewer was shown (`services.inbox.merge.entry_version`), which a
    merge sends back so that it is refused when the entry changed since; left out, nothing is checked."""
    return forms.CharField(required=False, max_length=VERSION_LENGTH)


def problems(form: forms.Form) -> list[str]:
    """Every error of a bound form as a sentence of its own, the form's own refusals last."""
    return [str(message) for errors in form.errors.values() for message in errors]


# --- inbox --------------------------------------------------------------------------------------


class RejectForm(forms.Form):
    """Reject one entry with the reason its own form sends (`reason`: the inbox row's field, or the
    entry page's). `reason_<id>`, a field named for the row, is taken too and wins when both are sent."""

    reason = _text("reason", required=False, max_length=REASON_MAX_LENGTH)

    def __init__(self, data: Any, *, entry_id: int) -> None:
        super().__init__(data)
        self.row_field = f"reason_{entry_id}"
        self.fields[self.row_field] = _text("reason", required=False, max_length=REASON_MAX_LENGTH)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        data["reason"] = data.pop(self.row_field, "") or data.get("reason", "")
        return data


class BulkForm(forms.Form):
    """Merge, reject or undo the decision of the selected entries. A merge including flagged entries
    needs `confirm_flagged`. Each row sends the version it shows as `seen-<id>`: `seen` maps the ids
    to them, and a merge refuses an entry changed since."""

    action = _choice(
        "action",
        [("merge", "Merge"), ("reject", "Reject"), ("undo", "Undo")],
        required="Choose merge or reject.",
    )
    ids = IdsField(
        limit=BULK_LIMIT,
        error_messages={
            "required": "Select at least one entry.",
            "too_many": "Select at most %(limit)d entries at a time.",
        },
    )
    reason = _text("reason", required=False, max_length=REASON_MAX_LENGTH)
    confirm_flagged = forms.BooleanField(required=False)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        sent = {pk: self.data.get(f"seen-{pk}") for pk in data.get("ids", [])}
        data["seen"] = {pk: version for pk, version in sent.items() if isinstance(version, str) and version}
        return data


class MergeForm(forms.Form):
    """Merge one entry, with the reviewer's answers to what the merge asked (docs/dashboard.md
    "Inbox"): `confirm_flagged` once a flagged text was read whole; for a boundary that competes with
    others, the `choice` of what becomes of the competitors shown (`supersede` lists the active
    decisions, `reject` the pending entries, rejected with `reason`); `seen`, the version read."""

    CHOICES = [
        ("supersede", "Supersede the active decisions, keep the pending proposals"),
        ("reject", "Reject the pending proposals, keep the active decisions"),
        ("both", "Supersede the active decisions and reject the pending proposals"),
        ("keep_both", "Keep both"),
    ]

    confirm_flagged = forms.BooleanField(required=False)
    choice = _choice("choice", CHOICES)
    supersede = IdsField(limit=BULK_LIMIT, required=False)
    reject = IdsField(limit=BULK_LIMIT, required=False)
    reason = _text("reason", required=False, max_length=REASON_MAX_LENGTH)
    seen = seen_field()

    def choices(self) -> MergeIn:
        """What the merge is asked, from a valid form: `confirm_flagged`, `keep_both`, `supersede`,
        `reject`, `reason` and the `version` seen. Competitors the choice leaves alone are kept
        (`keep_both`)."""
        data = self.cleaned_data
        choice = data["choice"]
        decisions = data["supersede"] if choice in ("supersede", "both") else []
        entries = data["reject"] if choice in ("reject", "both") else []
        left = (choice == "supersede" and data["reject"]) or (choice == "reject" and data["supersede"])
        return MergeIn(
            confirm_flagged=data["confirm_flagged"],
            keep_both=choice == "keep_both" or bool(left),
            supersede=decisions,
            reject=entries,
            reason=data["reason"],
            version=data["seen"] or None,
        )


class DensityForm(forms.Form):
    """How dense the reviewer wants the inbox: comfortable or compact rows."""

    density = _choice("density", Density.choices, required="density: choose comfortable or compact")


# --- decisions ----------------------------------------------------------------------------------


class DecisionTextForm(forms.Form):
    """A decision's text, as edited on its page (a revision keeps the previous text)."""

    title = _text("title", max_length=TITLE_MAX_LENGTH)
    # Content and rationale are kept as typed, leading spaces and line breaks included.
    content = _text("content", strip=False)
    rationale = _text("rationale", required=False, strip=False)


class DecisionForm(DecisionTextForm):
    """A new decision: recorded from the list, or written on the spot to replace another."""

    type = _choice("type", DecisionType.choices, required="type: must not be empty")
    agent_name = _text("agent_name", required=False, max_length=AGENT_NAME_MAX_LENGTH)

    field_order = ["type", "title", "content", "rationale", "agent_name"]


class SupersedeForm(forms.Form):
    """Supersede a decision by an existing one. Whether that one is active, in this project and not
    the same decision is the service's to say."""

    superseded_by = id_field(
        "superseded_by", "decision", required="Choose the decision that replaces this one."
    )


class RetypeForm(forms.Form):
    """Give the selected decisions one type."""

    ids = IdsField(
        limit=RETYPE_LIMIT,
        error_messages={
            "required": "Select at least one decision to change its type.",
            "too_many": "Select at most %(limit)d decisions at a time.",
        },
    )
    type = _choice("type", DecisionType.choices, required="Choose the type to give the selected decisions.")


# --- memory -------------------------------------------------------------------------------------


class MemoryEditForm(forms.Form):
    """A memory's importance and tags. Either may be left out: what is not sent stays as it is
    (an empty tags field clears them)."""

    importance = _choice("importance", Importance.choices)
    tags = _text("tags", required=False)

    def clean_importance(self) -> str | None:
        return self.cleaned_data.get("importance") or None

    def clean_tags(self) -> str | None:
        return self.cleaned_data.get("tags", "") if "tags" in self.data else None


class MemoryPinForm(forms.Form):
    """Pin a memory (it never expires) or unpin it (it expires again from its source's time-to-live)."""

    pinned = _choice(
        "pinned", [("true", "Pin"), ("false", "Unpin")], required="pinned: choose to pin or to unpin"
    )

    def clean_pinned(self) -> bool:
        return self.cleaned_data.get("pinned") == "true"


class MemoryMergeForm(forms.Form):
    """Settle a near-duplicate: which of the two memories is kept. Whether it is one of the two is the
    service's to say."""

    keep = id_field("keep", "memory", required="Choose the memory to keep.")


# --- what agents were told ----------------------------------------------------------------------


class CompilationFilterForm(forms.Form):
    """The filters of the list of what agents were told (read from the URL)."""

    agent = forms.CharField(required=False, label="Agent")
    run = forms.CharField(required=False, label="Run")
