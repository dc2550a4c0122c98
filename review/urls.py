from __future__ import annotations

from django.urls import path

from review import views, views_ledger

app_name = "review"

P = "p/<slug:project>/"

urlpatterns = [
    path("", views.home, name="home"),
    path(P, views.project_page, name="project"),
    path(P + "inbox/", views.inbox, name="inbox"),
    path(P + "inbox/bulk", views.inbox_bulk, name="inbox_bulk"),
    path(P + "inbox/<int:entry_id>/", views.entry_page, name="entry"),
    path(P + "inbox/<int:entry_id>/merge", views.entry_merge, name="entry_merge"),
    path(P + "inbox/<int:entry_id>/reject", views.entry_reject, name="entry_reject"),
    path(P + "decisions/", views_ledger.decisions, name="decisions"),
    path(P + "decisions/new", views_ledger.decision_new, name="decision_new"),
    path(P + "decisions/retype", views_ledger.decision_retype, name="decision_retype"),
    path(P + "decisions/<int:decision_id>/", views_ledger.decision_page, name="decision"),
    path(P + "decisions/<int:decision_id>/edit", views_ledger.decision_edit, name="decision_edit"),
    path(
        P + "decisions/<int:decision_id>/supersede",
        views_ledger.decision_supersede,
        name="decision_supersede",
    ),
    path(P + "decisions/<int:decision_id>/archive", views_ledger.decision_archive, name="decision_archive"),
    path(P + "memory/", views_ledger.memory, name="memory"),
    path(P + "memory/<int:memory_id>/edit", views_ledger.memory_edit, name="memory_edit"),
    path(P + "memory/<int:memory_id>/archive", views_ledger.memory_archive, name="memory_archive"),
    path(P + "sessions/", views_ledger.sessions, name="sessions"),
    path(P + "compilations/", views_ledger.compilations, name="compilations"),
    path(P + "compilations/<int:compilation_id>/", views_ledger.compilation_page, name="compilation"),
    path(P + "mirror/", views_ledger.mirror_page, name="mirror"),
    path(P + "mirror/import", views_ledger.mirror_import, name="mirror_import"),
    path(P + "mirror/export", views_ledger.mirror_export, name="mirror_export"),
]
