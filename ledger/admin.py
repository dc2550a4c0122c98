"""Admin for operators: browse and search everything, change little, delete nothing of the ledger."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from ledger.context import BUDGET_LIMITS, budget_problems
from ledger.models import (
    Agent,
    AgentMemory,
    ApiToken,
    AuditEvent,
    Compilation,
    Decision,
    DecisionRevision,
    EntryRevision,
    InboxEntry,
    Membership,
    MirrorRun,
    Project,
    Session,
)


class NoDeleteAdmin(admin.ModelAdmin):
    """Ledger history is archived, never deleted: no delete button, no bulk delete action."""

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyAdmin(NoDeleteAdmin):
    """Rows written only by the ledger's services (audit, revisions, compilations)."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ["user"]


class ProjectForm(forms.ModelForm):
    """A project's settings; its context budgets are checked here, where a person can fix them (the
    compiler ignores an invalid one)."""

    class Meta:
        model = Project
        fields = ["context_budgets"]  # the admin adds the rest of the project's fields
        help_texts = {
            "context_budgets": (
                "Token budgets of this project's context blocks, any of "
                + ", ".join(f"{key} (0-{limit})" for key, limit in BUDGET_LIMITS.items())
                + ', for example {"relevant": 1500, "session": 800}. Unset ones come from the settings.'
            )
        }

    def clean_context_budgets(self) -> Any:
        value = self.cleaned_data.get("context_budgets")
        if value in (None, ""):
            return {}
        problems = budget_problems(value)
        if problems:
            raise forms.ValidationError(problems)
        return value


@admin.register(Project)
class ProjectAdmin(NoDeleteAdmin):
    form = ProjectForm
    list_display = ["slug", "name", "workspace", "coordinator_agent", "exported_at", "export_error_at"]
    search_fields = ["slug", "name"]
    readonly_fields = ["export_error", "export_error_at", "exported_at", "created_at", "updated_at"]
    inlines = [MembershipInline]


@admin.register(Agent)
class AgentAdmin(ReadOnlyAdmin):
    list_display = ["name", "project", "key", "created_at"]
    list_filter = ["project"]
    search_fields = ["name", "key"]


class EntryRevisionInline(admin.TabularInline):
    model = EntryRevision
    extra = 0
    can_delete = False
    readonly_fields = ["title", "content", "rationale", "changed_by", "changed_at"]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(EntryRevision)
class EntryRevisionAdmin(ReadOnlyAdmin):
    list_display = ["entry", "title", "changed_by", "changed_at"]
    list_filter = ["entry__project"]
    search_fields = ["title", "content", "changed_by"]
    list_select_related = ["entry"]


@admin.register(InboxEntry)
class InboxEntryAdmin(ReadOnlyAdmin):
    list_display = ["slug", "project", "agent", "type", "status", "title", "created_at", "reviewed_by"]
    list_filter = ["project", "status", "type", "source", "importance"]
    search_fields = ["slug", "title", "content", "agent__name", "run_id"]
    date_hierarchy = "created_at"
    list_select_related = ["project", "agent"]
    inlines = [EntryRevisionInline]
    # Read-only: merge and reject go through the dashboard or the API so the rules and audit trail hold.


class RevisionInline(admin.TabularInline):
    model = DecisionRevision
    extra = 0
    can_delete = False
    readonly_fields = ["title", "content", "rationale", "changed_by", "changed_at"]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(DecisionRevision)
class DecisionRevisionAdmin(ReadOnlyAdmin):
    list_display = ["decision", "title", "changed_by", "changed_at"]
    list_filter = ["decision__project"]
    search_fields = ["title", "content", "changed_by"]
    list_select_related = ["decision"]


@admin.register(Decision)
class DecisionAdmin(ReadOnlyAdmin):
    list_display = ["title", "project", "type", "status", "agent", "superseded_by", "created_at"]
    list_filter = ["project", "status", "type"]
    search_fields = ["title", "content", "rationale", "agent__name"]
    date_hierarchy = "created_at"
    list_select_related = ["project", "agent", "superseded_by"]
    # Read-only: edits go through the dashboard so a revision and an audit event are kept.
    inlines = [RevisionInline]


@admin.register(AgentMemory)
class AgentMemoryAdmin(ReadOnlyAdmin):
    list_display = [
        "__str__",
        "project",
        "agent",
        "type",
        "importance",
        "status",
        "source",
        "tokens",
        "created_at",
    ]
    list_filter = ["project", "type", "importance", "status", "source", "cross_team"]
    search_fields = ["content", "agent__name", "tag_index", "content_sha256"]
    date_hierarchy = "created_at"
    list_select_related = ["project", "agent"]


@admin.register(Session)
class SessionAdmin(ReadOnlyAdmin):
    list_display = ["session_id", "project", "focus_area", "started_at", "ended_at"]
    list_filter = ["project"]
    search_fields = ["session_id", "focus_area", "summary"]


@admin.register(ApiToken)
class ApiTokenAdmin(NoDeleteAdmin):
    list_display = ["prefix", "project", "role", "agent", "label", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["project", "role"]
    search_fields = ["prefix", "label", "agent__name"]
    readonly_fields = ["project", "role", "agent", "token_hash", "prefix", "created_at", "last_used_at"]
    fields = [
        "project",
        "role",
        "agent",
        "prefix",
        "label",
        "token_hash",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Tokens are issued with `manage.py issue_token`, which prints the secret once.
        return False


@admin.register(Compilation)
class CompilationAdmin(ReadOnlyAdmin):
    list_display = ["run_id", "project", "agent", "child", "tokens", "sha256", "created_at"]
    list_filter = ["project", "child"]
    search_fields = ["run_id", "sha256", "agent__name"]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "project", "role", "created_at"]
    list_filter = ["project", "role"]
    search_fields = ["user__username", "project__slug"]
    autocomplete_fields = ["user"]


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = [
        "created_at",
        "project",
        "actor",
        "via",
        "action",
        "object_type",
        "object_id",
        "from_state",
        "to_state",
    ]
    list_filter = ["project", "action", "via", "object_type"]
    search_fields = ["actor"]


@admin.register(MirrorRun)
class MirrorRunAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "project", "kind", "trigger", "ok", "actor"]
    list_filter = ["project", "kind", "ok", "trigger"]
