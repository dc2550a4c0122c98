"""The filters of the ledger's lists, one vocabulary for the agent API and the dashboard.

Each FilterSet reads plain query parameters (a `QueryDict` from the dashboard's URL, a dict from the
API's validated query) and narrows a queryset its caller chose: the caller decides which rows may be
seen (`visibility.entries_visible_to`, `visibility.memories_visible_to`) and their order; the FilterSet
decides only which of them match (and, for a text search, their order). The rules every list shares
live here once:

- a status filter takes one of the statuses or `all` (every status); absent or empty, it takes the
  list's default (inbox `pending`, decisions and memory `active`);
- a choice that is not one of the allowed values is a form error naming them (the API's 400, the
  dashboard's message above the list);
- an agent name that no agent can have matches nothing (`selectors.agent_filter_key`);
- tags match whole tags, any of them; a tag no row can carry matches nothing, and more tags than a
  row can hold is a form error;
- `q` is a full-text search (`ledger.search`): a row matches when it holds any word of the query,
  stemmed, the last word typed also as a prefix; the rows come best match first instead of in the
  list's own order, and rows holding all the words, or the words in a title, rank higher.

Some filters serve one side only: the API does not take the dashboard's `age`, and `flagged` on the
memory list is applied by the dashboard's view, since flags are computed from
the text. The dashboard spells the memory status as the yes/no `archived` (and `superseded`) and the
tag filter `tag`; the API as `status` and `tags`. Expired memories leave the active memory list unless
`expired` is given: the API does not give it, the dashboard shows them (marked) unless told to hide them.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Any, ClassVar

import django_filters
from django import forms
from django.db.models import Q, QuerySet
from django.forms import BoundField
from django.utils import timezone
from django_filters.fields import ChoiceField

from ledger.lifecycle import live
from ledger.models import (
    AgentMemory,
    Decision,
    DecisionStatus,
    DecisionType,
    EntryStatus,
    EntryType,
    Episode,
    EpisodeOutcome,
    EpisodeSource,
    Importance,
    InboxEntry,
    MemoryStatus,
    MemoryType,
    Source,
)
from ledger.search import search
from ledger.selectors import agent_filter_key
from ledger.values import MAX_TAGS, InvalidValue, normalize_tags, tag_needle

# The status filter's value for "every status".
ALL = "all"
AGES = {"day": timedelta(days=1), "week": timedelta(days=7), "month": timedelta(days=30)}


def wanted_tags(raw: str | Iterable[str] | None) -> list[str] | None:
    """The whole tags to match (any of them), or None when no tag was asked for.

    A tag no row can carry (too long, or with a character that cannot be stored) is dropped, so a
    filter of only such tags matches nothing, the way an invalid agent name does. More than `MAX_TAGS`
    different tags raise `InvalidValue`: a row holds no more, and each one is a term of the query.
    """
    if raw is None:
        return None
    items = raw.split(",") if isinstance(raw, str) else raw
    asked: dict[str, None] = {}  # insertion-ordered, with constant-time membership
    for item in items:
        if not isinstance(item, str) or not item.strip():
            continue
        asked[item.strip().lower()] = None
        if len(asked) > MAX_TAGS:
            raise InvalidValue(f"at most {MAX_TAGS} tags, got more")
    wanted: list[str] = []
    for item in asked:
        try:
            wanted.extend(normalize_tags([item]))
        except InvalidValue:
            continue
    return list(dict.fromkeys(wanted)) if asked else None


def _tag_count(value: str) -> None:
    """A form error, not a query too large for the database, for more tags than a row can hold."""
    try:
        wanted_tags(value)
    except InvalidValue as exc:
        raise forms.ValidationError(str(exc)) from exc


class OneOfField(ChoiceField):
    """A choice whose error names the value and every allowed one, as the services' errors do."""

    def validate(self, value: Any) -> None:
        if value in self.empty_values or self.valid_value(value):
            super().validate(value)
            return
        allowed = ", ".join(str(key) for key, _ in self.choices if key not in self.empty_values)
        raise forms.ValidationError(f"{value!r} is not one of: {allowed}", code="invalid_choice")


class OneOf(django_filters.ChoiceFilter):
    field_class = OneOfField


class StatusFilter(OneOf):
    """One of `statuses`, or `all` for every status."""

    def __init__(self, statuses: Any, **kwargs: Any) -> None:
        super().__init__(
            choices=[*statuses.choices, (ALL, "All")],
            method=self.by_status,
            empty_label=None,
            label="Status",
            **kwargs,
        )

    @staticmethod
    def by_status(queryset: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        return queryset if value == ALL else queryset.filter(status=value)


class AgentFilter(django_filters.CharFilter):
    """The rows of one agent, named in any case; a name no agent can have (blank, too long, not
    printable) matches nothing. Not stripped, so that a blank name is such a name, not "any agent"."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(method=self.by_agent, label="Agent", strip=False, **kwargs)

    @staticmethod
    def by_agent(queryset: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        return queryset.filter(agent__key=agent_filter_key(value))


class TagsFilter(django_filters.CharFilter):
    """Rows carrying any of the comma-separated tags, as whole tags (`ops` does not match `devops`)."""

    def __init__(self, *, label: str = "Tag", **kwargs: Any) -> None:
        super().__init__(method=self.by_tags, label=label, validators=[_tag_count], **kwargs)

    @staticmethod
    def by_tags(queryset: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        wanted = wanted_tags(value)
        if wanted is None:
            return queryset
        match = Q()
        for tag in wanted:
            match |= Q(tag_index__contains=tag_needle(tag))
        return queryset.filter(match) if wanted else queryset.none()


class TextFilter(django_filters.CharFilter):
    """Rows whose text holds any word of the query, best match first (`ledger.search`): rows holding
    all the words, or the words in a title, rank higher; the last word typed also matches as a prefix.
    The list's own order gives way to relevance."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(method=self.by_text, label="Text", **kwargs)

    @staticmethod
    def by_text(queryset: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        return search(queryset, value, paged=True)  # a list counts its rows, then reads a page


class LedgerFilterSet(django_filters.FilterSet):
    """A FilterSet whose `defaults` apply when none of them is given (absent or empty).

    The defaults are one choice, written in each spelling a list takes: when a request gives any of
    them, it has chosen, and the others stay unset.
    """

    defaults: ClassVar[dict[str, str]] = {}
    # A second spelling of a field, which the API takes and a person's form does not show.
    api_spellings: ClassVar[tuple[str, ...]] = ()

    def __init__(self, data: Any = None, *args: Any, **kwargs: Any) -> None:
        data = data.copy() if data is not None else {}
        if not any(data.get(name) for name in self.defaults):
            for name, value in self.defaults.items():
                data[name] = value
        super().__init__(data, *args, **kwargs)

    @property
    def person_fields(self) -> list[BoundField]:
        """The form's fields a person fills in: one per choice, the API's second spellings left out."""
        return [field for field in self.form if field.name not in self.api_spellings]


class InboxFilter(LedgerFilterSet):
    status = StatusFilter(EntryStatus)
    type = OneOf(choices=EntryType.choices, empty_label="Any type", label="Type")
    agent = AgentFilter()
    run_id = django_filters.CharFilter(label="Run", strip=False)
    q = TextFilter()
    age = django_filters.ChoiceFilter(
        choices=[
            ("day", "Last 24 hours"),
            ("week", "Last 7 days"),
            ("month", "Last 30 days"),
            ("older", "Older"),
        ],
        method="filter_age",
        empty_label="Any age",
        label="Age",
    )

    defaults = {"status": EntryStatus.PENDING}

    class Meta:
        model = InboxEntry
        fields: list[str] = []

    def filter_age(self, queryset: QuerySet[InboxEntry], name: str, value: str) -> QuerySet[InboxEntry]:
        now = timezone.now()
        if value == "older":
            return queryset.filter(created_at__lt=now - AGES["month"])
        return queryset.filter(created_at__gte=now - AGES[value])


class DecisionFilter(LedgerFilterSet):
    status = StatusFilter(DecisionStatus)
    type = OneOf(choices=DecisionType.choices, empty_label="Any type", label="Type")
    agent = AgentFilter()
    since = django_filters.DateFilter(field_name="created_at", lookup_expr="date__gte", label="From")
    until = django_filters.DateFilter(field_name="created_at", lookup_expr="date__lte", label="To")
    q = TextFilter()
    # `import`: adopted from the team's files, to find and retype them.
    source = OneOf(choices=Source.choices, empty_label="Any source", label="Source")

    defaults = {"status": DecisionStatus.ACTIVE}

    class Meta:
        model = Decision
        fields: list[str] = []


class MemoryFilter(LedgerFilterSet):
    """Memories. Superseded ones are listed only when asked for (`status=superseded`, the dashboard's
    `superseded`); expired ones (`expires_at` passed, `ledger.lifecycle.live`) are left out of the
    active list unless `expired` says otherwise (`true`: only them, `all`: with the others)."""

    type = OneOf(choices=MemoryType.choices, empty_label="Any type", label="Type")
    importance = OneOf(choices=Importance.choices, empty_label="Any importance", label="Importance")
    tag = TagsFilter()
    agent = AgentFilter()
    q = TextFilter()
    archived = django_filters.BooleanFilter(
        method="filter_archived",
        label="Archived",
        widget=forms.Select(choices=[("false", "No"), ("true", "Yes")]),
    )
    superseded = django_filters.BooleanFilter(
        method="filter_superseded",
        label="Superseded",
        widget=forms.Select(choices=[("", "Hidden"), ("true", "Superseded only")]),
    )
    expired = OneOf(
        choices=[(ALL, "Shown"), ("false", "Hidden"), ("true", "Expired only")],
        method="filter_expired",
        empty_label=None,
        label="Expired",
    )
    similar = django_filters.BooleanFilter(
        method="filter_similar",
        label="Near-duplicates",
        widget=forms.Select(choices=[("", "Any"), ("true", "Near-duplicates only")]),
    )
    # Flags are computed from the text, not stored: the dashboard's memory view applies this one.
    flagged = django_filters.BooleanFilter(
        method="filter_flagged",
        label="Flagged",
        widget=forms.Select(choices=[("", "Any"), ("1", "Flagged only")]),
    )
    # The API's spellings of `archived` and `tag`.
    status = StatusFilter(MemoryStatus)
    tags = TagsFilter(label="Tags")

    defaults = {"status": MemoryStatus.ACTIVE, "archived": "false", "superseded": ""}
    api_spellings = ("status", "tags")

    class Meta:
        model = AgentMemory
        fields: list[str] = []

    def filter_queryset(self, queryset: QuerySet[AgentMemory]) -> QuerySet[AgentMemory]:
        """The filters, and, unless `expired` was given, the active list without its expired rows."""
        rows = super().filter_queryset(queryset)
        data = self.form.cleaned_data
        if not data.get("expired") and data.get("status") == MemoryStatus.ACTIVE:
            rows = rows.filter(live())
        return rows

    def filter_archived(
        self, queryset: QuerySet[AgentMemory], name: str, value: bool | None
    ) -> QuerySet[AgentMemory]:
        if self.form.cleaned_data.get("superseded"):
            return queryset  # asking for the superseded ones is the status choice
        return queryset.filter(status=MemoryStatus.ARCHIVED if value else MemoryStatus.ACTIVE)

    def filter_superseded(
        self, queryset: QuerySet[AgentMemory], name: str, value: bool | None
    ) -> QuerySet[AgentMemory]:
        return queryset.filter(status=MemoryStatus.SUPERSEDED) if value else queryset

    def filter_expired(self, queryset: QuerySet[AgentMemory], name: str, value: str) -> QuerySet[AgentMemory]:
        if value == ALL:
            return queryset
        expired = Q(expires_at__lte=timezone.now())
        return queryset.filter(expired) if value == "true" else queryset.exclude(expired)

    def filter_similar(
        self, queryset: QuerySet[AgentMemory], name: str, value: bool | None
    ) -> QuerySet[AgentMemory]:
        return queryset.filter(similar_to__isnull=False) if value else queryset

    def filter_flagged(
        self, queryset: QuerySet[AgentMemory], name: str, value: bool | None
    ) -> QuerySet[AgentMemory]:
        return queryset


class EpisodeFilter(LedgerFilterSet):
    """Episodes of every outcome (no default): by agent, outcome, who wrote it, run, or their text."""

    agent = AgentFilter()
    outcome = OneOf(choices=EpisodeOutcome.choices, empty_label="Any outcome", label="Outcome")
    source = OneOf(choices=EpisodeSource.choices, empty_label="Any source", label="Source")
    run_id = django_filters.CharFilter(label="Run", strip=False)
    q = TextFilter()

    class Meta:
        model = Episode
        fields: list[str] = []
