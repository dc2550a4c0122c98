"""The dashboard's list filters: the ledger's own, shared with the agent API (ledger/filters.py), and
the inbox's, whose agent is a choice among the project's agents instead of a typed name."""

from __future__ import annotations

from typing import Any

import django_filters
from django import forms
from django.db.models import QuerySet
from django_filters.fields import ModelChoiceField

from ledger import filters as ledger_filters
from ledger.filters import DecisionFilter, MemoryFilter
from ledger.models import Agent, Project
from ledger.selectors import agent_filter_key

__all__ = ["DecisionFilter", "InboxFilter", "MemoryFilter"]


class AgentChoiceField(ModelChoiceField):
    """One of the project's agents, offered and sent by name. Any spelling of a name picks its agent
    (`ALICE` is Alice), as the typed filter did, so older links keep working; a name that is not one
    of the project's agents is a form error, since the select never sends one."""

    default_error_messages = {"invalid_choice": "%(value)r is not one of this project's agents."}

    def to_python(self, value: Any) -> Agent | None:
        if value in self.empty_values:
            return None
        agent = self.queryset.filter(key=agent_filter_key(str(value))).first()
        if agent is None:
            raise forms.ValidationError(
                self.error_messages["invalid_choice"], code="invalid_choice", params={"value": value}
            )
        return agent


class AgentChoiceFilter(django_filters.ModelChoiceFilter):
    field_class = AgentChoiceField


class InboxFilter(ledger_filters.InboxFilter):
    """The inbox's filters, the agent chosen from this project's agents (`project`), by name. Without a
    project, the agents are those of the rows being filtered (enough to read a filtered list's query
    string back, as the entry page does)."""

    agent = AgentChoiceFilter(
        queryset=Agent.objects.none(), to_field_name="name", empty_label="Any agent", label="Agent"
    )

    def __init__(self, data: Any = None, *args: Any, project: Project | None = None, **kwargs: Any) -> None:
        super().__init__(data, *args, **kwargs)
        agents: QuerySet[Agent] = Agent.objects.all()
        if project is not None:
            agents = agents.filter(project=project)
        elif self.queryset is not None:
            agents = agents.filter(project__in=self.queryset.values("project_id"))
        self.filters["agent"].queryset = agents.only("id", "key", "name").order_by("key", "id")
