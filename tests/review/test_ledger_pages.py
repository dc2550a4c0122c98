"""Decisions, memory, sessions, what agents were told, and the mirror pages (docs/dashboard.md)."""

from __future__ import annotations

import json
import os
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from ledger import context, services
from ledger.models import AgentMemory, AuditEvent, Decision, DecisionRevision, Membership, MirrorRun


def make(project, title, **kw):
    kw.setdefault("type", "architectural")
    kw.setdefault("agent_name", "lead")
    return services.decision_create(project=project, title=title, content=f"{title}.", by="l", **kw)


def test_decisions_default_to_active_and_filter(lead, project):
    a, b = make(project, "Alpha rule"), make(project, "Beta rule", type="process")
    services.decision_archive(project=project, decision_id=a.pk, by="l")
    page = lambda **q: [d.pk for d in lead.get("/p/alpha/decisions/", q).context["page"].object_list]  # noqa: E731
    assert page() == [b.pk]
    assert page(status="all") == [b.pk, a.pk]
    assert page(status="all", type="architectural") == [a.pk]
    assert page(status="all", q="beta") == [b.pk]
    assert page(status="all", since="2000-01-01", until="2000-01-02") == []


def test_bad_date_filter_is_a_message_not_an_error(lead, project):
    response = lead.get("/p/alpha/decisions/", {"since": "yesterday"})
    assert response.status_code == 200 and b"message error" in response.content


@pytest.mark.parametrize("size", [3, 60])
def test_decision_list_makes_a_fixed_number_of_queries(lead, project, django_assert_num_queries, size):
    for i in range(size):
        make(project, f"rule {i}", agent_name=f"agent-{i % 4}")
    lead.get("/p/alpha/decisions/")
    # session, user, project, membership, page count, counts, page rows
    with django_assert_num_queries(7):
        response = lead.get("/p/alpha/decisions/")
    assert len(response.context["page"].object_list) == min(size, 50)


def test_decision_page_shows_revisions_source_entry_and_the_chain_both_ways(lead, project, entry):
    merged = services.entry_merge(project=project, entry_id=entry.pk, by="l")
    assert merged.decision_id is not None
    middle = Decision.objects.get(pk=merged.decision_id)
    services.decision_edit(project=project, decision_id=middle.pk, by="carol", content="Edited.")
    older = make(project, "Older rule")
    services.decision_supersede(project=project, decision_id=older.pk, superseded_by_id=middle.pk, by="l")
    newer = make(project, "Newer rule", supersedes=[middle.pk])
    response = lead.get(reverse("review:decision", args=["alpha", middle.pk]))
    html = response.content.decode()
    assert [d.pk for d in response.context["replaced"]] == [older.pk]
    assert [d.pk for d in response.context["successors"]] == [newer.pk]
    assert "Earlier versions" in html and "All state in PostgreSQL." in html
    assert reverse("review:entry", args=["alpha", entry.pk]) in html
    assert AuditEvent.objects.filter(object_type="decision", object_id=middle.pk, action="edit").exists()


def test_edit_keeps_a_revision(lead, project, decision):
    lead.post(
        reverse("review:decision_edit", args=["alpha", decision.pk]),
        {"title": "Renamed", "content": "New.", "rationale": ""},
    )
    decision.refresh_from_db()
    assert decision.title == "Renamed"
    assert DecisionRevision.objects.get(decision=decision).title == "Use PostgreSQL for state"


def test_supersede_by_an_existing_decision(lead, project, decision):
    other = make(project, "Replacement")
    response = lead.post(
        reverse("review:decision_supersede", args=["alpha", decision.pk]),
        {"mode": "existing", "superseded_by": other.pk},
    )
    assert response.status_code == 302
    decision.refresh_from_db()
    assert (decision.status, decision.superseded_by_id) == ("superseded", other.pk)


def test_supersede_by_a_new_decision_written_on_the_spot(lead, project, decision):
    response = lead.post(
        reverse("review:decision_supersede", args=["alpha", decision.pk]),
        {"mode": "new", "type": "architectural", "title": "PostgreSQL 16", "content": "Upgrade."},
    )
    new = Decision.objects.get(title="PostgreSQL 16")
    assert response["Location"] == reverse("review:decision", args=["alpha", new.pk])
    decision.refresh_from_db()
    assert decision.superseded_by_id == new.pk
    assert new.agent.name == "lead"


def test_supersede_refusal_says_why_beside_the_choice(lead, project, decision):
    response = lead.post(
        reverse("review:decision_supersede", args=["alpha", decision.pk]),
        {"mode": "existing", "superseded_by": ""},
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert (
        '<span class="field-error" id="supersede-superseded_by-error">'
        "Choose the decision that replaces this one.</span>"
    ) in html
    decision.refresh_from_db()
    assert decision.status == "active"


def test_refused_replacement_is_shown_again_with_what_was_typed(lead, project, decision):
    response = lead.post(
        reverse("review:decision_supersede", args=["alpha", decision.pk]),
        {
            "mode": "new",
            "type": "scope",
            "title": "  ",
            "content": "Typed <b>with care</b>.",
            "rationale": "Why.",
        },
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert '<span class="field-error" id="replacement-title-error">title: must not be empty</span>' in html
    assert "Typed &lt;b&gt;with care&lt;/b&gt;." in html and ">Why.</textarea>" in html
    assert '<option value="scope" selected>' in html
    assert '<details class="panel" id="supersede" open>' in html
    decision.refresh_from_db()
    assert decision.status == "active" and Decision.objects.count() == 1


def test_supersede_by_itself_is_refused(lead, project, decision):
    response = lead.post(
        reverse("review:decision_supersede", args=["alpha", decision.pk]),
        {"superseded_by": decision.pk},
        follow=True,
    )
    assert b"cannot supersede itself" in response.content


def test_archive_and_archive_again(lead, project, decision):
    lead.post(reverse("review:decision_archive", args=["alpha", decision.pk]))
    decision.refresh_from_db()
    assert decision.status == "archived"
    response = lead.post(reverse("review:decision_archive", args=["alpha", decision.pk]), follow=True)
    assert b"archived, not active" in response.content


def test_record_a_decision(lead, project):
    lead.post(
        reverse("review:decision_new", args=["alpha"]),
        {"type": "scope", "title": "No billing", "content": "Later."},
    )
    assert Decision.objects.get().title == "No billing"
    response = lead.post(
        reverse("review:decision_new", args=["alpha"]),
        {"type": "opinion", "title": "x", "content": "y"},
    )
    assert response.status_code == 400 and Decision.objects.count() == 1
    assert '<span class="field-error" id="record-type-error">' in response.content.decode()


def test_memory_filters_and_per_agent_view(lead, project):
    services.memory_record(
        project=project,
        agent_name="Alice",
        type="learning",
        content="a",
        importance="high",
        tags="ops,cross-team",
    )
    services.memory_record(project=project, agent_name="Bob", type="pattern", content="b", tags="team")
    page = lambda **q: [m.content for m in lead.get("/p/alpha/memory/", q).context["page"].object_list]  # noqa: E731
    assert sorted(page()) == ["a", "b"]
    assert page(agent="alice") == ["a"]
    assert page(tag="team") == ["b"]
    assert page(importance="high", type="learning") == ["a"]


def test_memory_filter_form_shows_one_field_per_choice(lead, project):
    """The API's second spellings (`status` for `archived`, `tags` for `tag`) are not shown to a person."""
    html = lead.get("/p/alpha/memory/").content.decode()
    for shown in ("archived", "tag", "type", "importance", "agent", "q", "flagged"):
        assert f'name="{shown}"' in html
    for hidden in ("status", "tags"):
        assert f'name="{hidden}"' not in html
    # The API's spelling still filters when a link carries it.
    services.memory_record(project=project, agent_name="Bob", type="learning", content="kept", tags="keep")
    services.memory_record(project=project, agent_name="Bob", type="learning", content="other")
    page = lead.get("/p/alpha/memory/", {"tags": "keep"}).context["page"]
    assert [m.content for m in page.object_list] == ["kept"]


def test_memory_list_shows_an_injected_learnings_category(lead, project):
    services.memory_record(
        project=project,
        agent_name="Bob",
        type="learning",
        content="Retry the flaky upload once",
        source="coordinator",
        injected_by="lead",
        category="mistake-pattern",
    )
    services.memory_record(project=project, agent_name="Bob", type="learning", content="plain")
    rows = lead.get("/p/alpha/memory/").content.decode()
    assert rows.count('<div class="muted">mistake-pattern</div>') == 1


@pytest.mark.parametrize("size", [3, 60])
def test_memory_list_makes_a_fixed_number_of_queries(lead, project, django_assert_num_queries, size):
    for i in range(size):
        services.memory_record(
            project=project, agent_name=f"agent-{i % 4}", type="learning", content=f"m{i}", tags="ops"
        )
    lead.get("/p/alpha/memory/")
    # session, user, project, membership, page count, counts, page rows
    with django_assert_num_queries(7):
        response = lead.get("/p/alpha/memory/")
    assert len(response.context["page"].object_list) == min(size, 50)


def test_memory_edit_importance_and_tags_over_htmx(lead, project):
    memory = services.memory_record(project=project, agent_name="Alice", type="learning", content="a")
    response = lead.post(
        reverse("review:memory_edit", args=["alpha", memory.pk]),
        {"importance": "high", "tags": "Ops, ops, db"},
        HTTP_HX_REQUEST="true",
    )
    assert response.content.decode().lstrip().startswith(f'<tr id="memory-{memory.pk}"')
    memory.refresh_from_db()
    assert (memory.importance, memory.tags) == ("high", ["ops", "db"])


def test_memory_edit_refusal_renders_in_the_row(lead, project):
    memory = services.memory_record(project=project, agent_name="Alice", type="learning", content="a")
    response = lead.post(
        reverse("review:memory_edit", args=["alpha", memory.pk]),
        {"importance": "urgent"},
        HTTP_HX_REQUEST="true",
    )
    assert b"not one of" in response.content


def test_memory_archive(lead, project):
    memory = services.memory_record(project=project, agent_name="Alice", type="learning", content="a")
    lead.post(reverse("review:memory_archive", args=["alpha", memory.pk]))
    assert AgentMemory.objects.get().status == "archived"
    assert len(lead.get("/p/alpha/memory/").context["page"].object_list) == 0
    assert len(lead.get("/p/alpha/memory/", {"archived": "true"}).context["page"].object_list) == 1


def test_sessions_page(lead, project):
    services.session_start(project=project, session_id="sprint-1", focus_area="auth")
    assert b"sprint-1" in lead.get("/p/alpha/sessions/").content


def test_what_agents_were_told(lead, project, decision):
    compiled = context.compile(project, "Alice", run_id="run-9")
    listing = lead.get("/p/alpha/compilations/", {"agent": "alice", "run": "run-9"})
    assert [c.pk for c in listing.context["page"].object_list] == [compiled.compilation_id]
    detail = lead.get(reverse("review:compilation", args=["alpha", compiled.compilation_id]))
    assert "### Use PostgreSQL for state" in detail.content.decode()
    assert b"run-9" in lead.get(reverse("review:decision", args=["alpha", decision.pk])).content


def test_mirror_page_runs_export_and_shows_warnings(lead, project, tmp_path):
    project.workspace = str(tmp_path)
    project.save()
    inbox = tmp_path / ".squad/decisions/inbox"
    inbox.mkdir(parents=True)
    (inbox / "bad.md").write_bytes(b"\xff\xfe not UTF-8")
    lead.post(reverse("review:mirror_import", args=["alpha"]))
    response = lead.post(reverse("review:mirror_export", args=["alpha"]), follow=True)
    html = response.content.decode()
    assert "export: " in html and "bad.md" in html and "not UTF-8" in html
    assert MirrorRun.objects.filter(trigger="dashboard").count() == 2


def test_failed_export_is_shown_on_the_project_page(lead, project, tmp_path):
    project.workspace = str(tmp_path / "missing")
    project.save()
    response = lead.post(reverse("review:mirror_export", args=["alpha"]), follow=True)
    assert b"does not exist" in response.content
    assert b"The last export to the workspace failed" in lead.get("/p/alpha/").content


def test_add_member_creates_the_user_and_sets_the_role(project, monkeypatch):
    monkeypatch.setenv("NEW_PASSWORD", "s3cret-pass")
    out = StringIO()
    call_command(
        "add_member",
        "--project",
        "alpha",
        "--user",
        "maria",
        "--role",
        "viewer",
        "--password-env",
        "NEW_PASSWORD",
        stdout=out,
    )
    assert "made maria (new user) viewer of alpha" in out.getvalue()
    user = get_user_model().objects.get(username="maria")
    assert user.check_password("s3cret-pass")
    call_command(
        "add_member", "--project", "alpha", "--user", "maria", "--role", "coordinator", stdout=StringIO()
    )
    assert Membership.objects.get(user=user).role == "coordinator"


def test_add_member_dry_run_and_json(project):
    out = StringIO()
    call_command(
        "add_member",
        "--project",
        "alpha",
        "--user",
        "x",
        "--role",
        "viewer",
        "--dry-run",
        "--json",
        stdout=out,
    )
    assert json.loads(out.getvalue())["user_created"] is True
    assert not get_user_model().objects.filter(username="x").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["--project", "nope", "--user", "x", "--role", "viewer"],
        [
            "--project",
            "alpha",
            "--user",
            "x",
            "--role",
            "viewer",
            "--password-env",
            "UNSET_VARIABLE_FOR_TEST",
        ],
    ],
)
def test_add_member_bad_arguments_exit_2(project, args):
    os.environ.pop("UNSET_VARIABLE_FOR_TEST", None)
    with pytest.raises(CommandError) as info:
        call_command("add_member", *args, stdout=StringIO())
    assert info.value.returncode == 2


@pytest.mark.parametrize("password", ["short1", "password123", "12345678901", "maria123"])
def test_add_member_refuses_a_weak_password_with_exit_2(project, monkeypatch, password):
    monkeypatch.setenv("NEW_PASSWORD", password)
    with pytest.raises(CommandError, match="password refused: ") as info:
        call_command(
            "add_member",
            *["--project", "alpha", "--user", "maria", "--role", "viewer", "--password-env", "NEW_PASSWORD"],
            stdout=StringIO(),
        )
    assert info.value.returncode == 2
    assert not get_user_model().objects.filter(username="maria").exists()


def test_memory_types_read_as_words(lead, project):
    services.memory_record(
        project=project, agent_name="Alice", type="core_context", content="Alice owns HTTP."
    )
    html = lead.get("/p/alpha/memory/").content.decode()
    assert "<td>core context</td>" in html and "<td>core_context</td>" not in html
