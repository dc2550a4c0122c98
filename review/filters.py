"""django-filter FilterSets for the dashboard lists: filters live in the URL, so views can be bookmarked."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import django_filters
from django import forms
from django.db.models import Q, QuerySet
from django.utils import timezone

from ledger.models import (
    AgentMemory,
    Decision,
    DecisionStatus,
    DecisionType,
    EntryStatus,
    EntryType,
    Importance,
    InboxEntry,
    MemoryType,
    Source,
)
from ledger.selectors import tag_filter
from ledger.values import InvalidValue, agent_key, tag_needle

AGES = {"day": timedelta(days=1), "week": timedelta(days=7), "month": timedelta(days=30)}


def _tag_count(value: str) -> None:
    """A form error, not a query too large for the database, for more tags than a row can hold."""
    try:
        tag_filter(value)
    except InvalidValue as exc:
        raise forms.ValidationError(str(exc)) from exc


def _agent(queryset: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
    try:
        return queryset.filter(agent__key=agent_key(value))
    except InvalidValue:
        return queryset.none()


class InboxFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(
        choices=[*EntryStatus.choices, ("all", "All")],
        method="filter_status",
        empty_label=None,
        label="Status",
    )
    type = django_filters.ChoiceFilter(choices=EntryType.choices, empty_label="Any type", label="Type")
    agent = django_filters.CharFilter(method=_agent, label="Agent")
    q = django_filters.CharFilter(method="filter_text", label="Text")
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

    class Meta:
        model = InboxEntry
        fields: list[str] = []

    def __init__(self, data: Any = None, *args: Any, **kwargs: Any) -> None:
        data = data.copy() if data is not None else {}
        data.setdefault("status", EntryStatus.PENDING)
        super().__init__(data, *args, **kwargs)

    def filter_status(self, queryset: QuerySet[InboxEntry], name: str, value: str) -> QuerySet[InboxEntry]:
        return queryset if value == "all" else queryset.filter(status=value)

    def filter_text(self, queryset: QuerySet[InboxEntry], name: str, value: str) -> QuerySet[InboxEntry]:
        return queryset.filter(
            Q(title__icontains=value) | Q(content__icontains=value) | Q(slug__icontains=value)
        )

    def filter_age(self, queryset: QuerySet[InboxEntry], name: str, value: str) -> QuerySet[InboxEntry]:
        now = timezone.now()
        if value == "older":
            return queryset.filter(created_at__lt=now - AGES["month"])
        return queryset.filter(created_at__gte=now - AGES[value])


class DecisionFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(
        choices=[*DecisionStatus.choices, ("all", "All")],
        method="filter_status",
        empty_label=None,
        label="Status",
    )
    type = django_filters.ChoiceFilter(choices=DecisionType.choices, empty_label="Any type", label="Type")
    agent = django_filters.CharFilter(method=_agent, label="Agent")
    since = django_filters.DateFilter(field_name="created_at", lookup_expr="date__gte", label="From")
    until = django_filters.DateFilter(field_name="created_at", lookup_expr="date__lte", label="To")
    q = django_filters.CharFilter(method="filter_text", label="Text")
    # `import`: adopted from the team's files, to find and retype them.
    source = django_filters.ChoiceFilter(choices=Source.choices, empty_label="Any source", label="Source")

    class Meta:
        model = Decision
        fields: list[str] = []

    def __init__(self, data: Any = None, *args: Any, **kwargs: Any) -> None:
        data = data.copy() if data is not None else {}
        data.setdefault("status", DecisionStatus.ACTIVE)
        super().__init__(data, *args, **kwargs)

    def filter_status(self, queryset: QuerySet[Decision], name: str, value: str) -> QuerySet[Decision]:
        return queryset if value == "all" else queryset.filter(status=value)

    def filter_text(self, queryset: QuerySet[Decision], name: str, value: str) -> QuerySet[Decision]:
        return queryset.filter(
            Q(title__icontains=value) | Q(content__icontains=value) | Q(rationale__icontains=value)
        )


class MemoryFilter(django_filters.FilterSet):
    type = django_filters.ChoiceFilter(choices=MemoryType.choices, empty_label="Any type", label="Type")
    importance = django_filters.ChoiceFilter(
        choices=Importance.choices, empty_label="Any importance", label="Importance"
    )
    tag = django_filters.CharFilter(method="filter_tag", label="Tag", validators=[_tag_count])
    agent = django_filters.CharFilter(method=_agent, label="Agent")
    q = django_filters.CharFilter(field_name="content", lookup_expr="icontains", label="Text")
    archived = django_filters.BooleanFilter(
        method="filter_archived",
        label="Archived",
        widget=forms.Select(choices=[("false", "No"), ("true", "Yes")]),
    )
    # Flags are computed from the text, not stored: `review.views_ledger.memory` applies this one.
    flagged = django_filters.BooleanFilter(
        method="filter_flagged",
        label="Flagged",
        widget=forms.Select(choices=[("", "Any"), ("1", "Flagged only")]),
    )

    class Meta:
        model = AgentMemory
        fields: list[str] = []

    def __init__(self, data: Any = None, *args: Any, **kwargs: Any) -> None:
        data = data.copy() if data is not None else {}
        data.setdefault("archived", "false")
        super().__init__(data, *args, **kwargs)

    def filter_tag(self, queryset: QuerySet[AgentMemory], name: str, value: str) -> QuerySet[AgentMemory]:
        wanted = tag_filter(value)
        if wanted is None:
            return queryset
        match = Q()
        for tag in wanted:
            match |= Q(tag_index__contains=tag_needle(tag))
        return queryset.filter(match) if wanted else queryset.none()

    def filter_archived(
        self, queryset: QuerySet[AgentMemory], name: str, value: bool | None
    ) -> QuerySet[AgentMemory]:
        return queryset.filter(status="archived" if value else "active")

    def filter_flagged(
        self, queryset: QuerySet[AgentMemory], name: str, value: bool | None
    ) -> QuerySet[AgentMemory]:
        return queryset
