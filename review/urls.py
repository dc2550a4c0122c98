from __future__ import annotations

from django.urls import path

from review.views import (
    audit,
    decisions,
    entry,
    inbox,
    memory,
    mirror,
    projects,
    search,
    sessions,
    told,
    undo,
)

app_name = "review"

P = "p/<slug:project>/"

urlpatterns = [
    path("", projects.home, name="home"),
    path(P, projects.project_page, name="project"),
    path(P + "search/", search.search_page, name="search"),
    path(P + "inbox/", inbox.inbox_list, name="inbox"),
    path(P + "inbox/bulk", inbox.inbox_bulk, name="inbox_bulk"),
    path(P + "inbox/density", inbox.inbox_density, name="inbox_density"),
    path(P + "inbox/<int:entry_id>/", entry.entry_page, name="entry"),
    path(P + "inbox/<int:entry_id>/edit", entry.entry_edit, name="entry_edit"),
    path(P + "inbox/<int:entry_id>/merge", inbox.entry_merge, name="entry_merge"),
    path(P + "inbox/<int:entry_id>/reject", inbox.entry_reject, name="entry_reject"),
    path(P + "inbox/<int:entry_id>/undo", undo.entry_undo, name="entry_undo"),
    path(P + "inbox/<int:entry_id>/resolve", undo.entry_resolve, name="entry_resolve"),
    path(P + "decisions/", decisions.decision_list, name="decisions"),
    path(P + "decisions/new", decisions.decision_new, name="decision_new"),
    path(P + "decisions/retype", decisions.decision_retype, name="decision_retype"),
    path(P + "decisions/<int:decision_id>/", decisions.decision_page, name="decision"),
    path(P + "decisions/<int:decision_id>/edit", decisions.decision_edit, name="decision_edit"),
    path(
        P + "decisions/<int:decision_id>/supersede",
        decisions.decision_supersede,
        name="decision_supersede",
    ),
    path(P + "decisions/<int:decision_id>/archive", decisions.decision_archive, name="decision_archive"),
    path(P + "memory/", memory.memory_list, name="memory"),
    path(P + "memory/<int:memory_id>/edit", memory.memory_edit, name="memory_edit"),
    path(P + "memory/<int:memory_id>/archive", memory.memory_archive, name="memory_archive"),
    path(P + "memory/<int:memory_id>/pin", memory.memory_pin, name="memory_pin"),
    path(P + "memory/<int:memory_id>/merge", memory.memory_merge, name="memory_merge"),
    path(P + "memory/<int:memory_id>/dismiss-similar", memory.memory_dismiss_similar, name="memory_dismiss"),
    path(P + "sessions/", sessions.session_list, name="sessions"),
    path(P + "compilations/", told.compilation_list, name="compilations"),
    path(P + "compilations/<int:compilation_id>/", told.compilation_page, name="compilation"),
    path(P + "mirror/", mirror.mirror_page, name="mirror"),
    path(P + "mirror/import", mirror.mirror_import, name="mirror_import"),
    path(P + "mirror/export", mirror.mirror_export, name="mirror_export"),
    path(P + "audit/", audit.audit_list, name="audit"),
]
