"""Ledger rules (docs/ledger.md), exercised through the service functions every entry point calls."""

from __future__ import annotations

import hashlib

import pytest

from ledger import services
from ledger.models import AgentMemory, AuditEvent, Decision, DecisionRevision, InboxEntry, Session
from ledger.tokens import count_tokens


def submit(
    project, agent="Alice", slug="use-postgres", type="architectural", content="Use PostgreSQL.", **kw
):
    return services.entry_submit(
        project=project, agent_name=agent, slug=slug, type=type, content=content, **kw
    )


# --- submission -------------------------------------------------------------------------------


def test_submit_stores_a_pending_entry_under_the_normalised_slug(project):
    result = submit(project, slug="Use Postgres!", title="Use Postgres", tags="DB, ops")
    assert result.created
    entry = InboxEntry.objects.get(pk=result.entry.pk)
    assert (entry.slug, entry.status, entry.tags, entry.source) == (
        "use-postgres",
        "pending",
        ["db", "ops"],
        "agent",
    )
    assert entry.importance == "medium"


def test_resubmission_by_the_same_agent_updates_the_pending_entry_in_place(project):
    first = submit(project, content="v1")
    again = submit(project, agent="ALICE", slug="use postgres", content="v2", rationale="why", tags=["x"])
    assert not again.created
    assert again.entry.pk == first.entry.pk
    entry = InboxEntry.objects.get()
    assert (entry.content, entry.rationale, entry.tags) == ("v2", "why", ["x"])


@pytest.mark.parametrize("decide", ["merge", "reject"])
def test_resubmission_of_a_decided_entry_is_a_conflict_and_changes_nothing(project, decide):
    entry = submit(project, content="v1").entry
    getattr(services, f"entry_{decide}")(project=project, entry_id=entry.pk, by="lead")
    with pytest.raises(services.Conflict):
        submit(project, content="v2")
    assert InboxEntry.objects.get().content == "v1"


def test_slug_held_by_another_agent_is_decollided(project):
    submit(project, agent="Alice")
    beta = submit(project, agent="Agent Beta")
    assert beta.created
    assert beta.entry.slug == "use-postgres--agent-beta"


def test_decollision_counts_up_when_the_agent_segment_form_is_taken(project):
    submit(project, agent="Alice")
    submit(project, agent="Agent Beta")
    # A different agent whose name normalises to the same segment.
    third = submit(project, agent="agent_beta")
    assert third.entry.slug == "use-postgres--agent-beta--2"
    fourth = submit(project, agent="AGENT.BETA")
    assert fourth.entry.slug == "use-postgres--agent-beta--3"


def test_retry_of_a_decollided_submission_updates_its_own_entry(project):
    submit(project, agent="Alice")
    first = submit(project, agent="Bob", content="b1")
    retry = submit(project, agent="bob", content="b2")
    assert not retry.created
    assert retry.entry.pk == first.entry.pk
    assert InboxEntry.objects.count() == 2
    assert InboxEntry.objects.get(pk=first.entry.pk).content == "b2"


def test_agent_name_keeps_first_spelling(project):
    submit(project, agent="Agent Beta", slug="one")
    entry = submit(project, agent="AGENT BETA", slug="two").entry
    assert entry.agent.name == "Agent Beta"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"type": "opinion"}, "type"),
        ({"content": "   "}, "content"),
        ({"slug": "!!!"}, "slug"),
        ({"agent": "x" * 65}, "agent_name"),
        ({"importance": "urgent"}, "importance"),
        ({"tags": 5}, "tags"),
        ({"title": "t" * 301}, "title"),
        ({"content": "nul \x00 inside"}, "content"),
        ({"rationale": "lone \ud800 surrogate"}, "rationale"),
        ({"tags": ["ok", "n\x00l"]}, "tags"),
    ],
)
def test_invalid_submission_is_refused_and_stores_nothing(project, kwargs, field):
    with pytest.raises(services.Invalid) as info:
        submit(project, **kwargs)
    assert info.value.details[0]["field"] == field
    assert not InboxEntry.objects.exists()


# --- review -------------------------------------------------------------------------------------


def test_merge_of_a_decision_type_creates_an_active_decision(project):
    entry = submit(project, title="Use Postgres", rationale="ops", tags="db").entry
    merged = services.entry_merge(project=project, entry_id=entry.pk, by="lead")
    decision = Decision.objects.get(pk=merged.decision_id)
    assert (merged.status, merged.reviewed_by, merged.memory_id) == ("merged", "lead", None)
    assert merged.merged_at is not None
    assert (decision.status, decision.title, decision.rationale, decision.tags) == (
        "active",
        "Use Postgres",
        "ops",
        ["db"],
    )
    assert decision.agent.name == "Alice"
    assert decision.source_entry == merged


@pytest.mark.parametrize("type_", ["learning", "pattern", "update"])
def test_merge_of_a_memory_type_creates_a_memory_for_the_entry_agent(project, type_):
    entry = submit(project, type=type_, content="Cache warms in 5 s", importance="high", tags="ops").entry
    merged = services.entry_merge(project=project, entry_id=entry.pk, by="lead")
    memory = AgentMemory.objects.get(pk=merged.memory_id)
    assert (memory.type, memory.importance, memory.tags, memory.source) == (type_, "high", ["ops"], "inbox")
    assert memory.agent.name == "Alice"
    assert memory.content_sha256 == hashlib.sha256(b"Cache warms in 5 s").hexdigest()
    assert not Decision.objects.exists()


def test_merge_twice_is_a_conflict(project):
    entry = submit(project).entry
    services.entry_merge(project=project, entry_id=entry.pk, by="lead")
    with pytest.raises(services.Conflict):
        services.entry_merge(project=project, entry_id=entry.pk, by="lead")
    assert Decision.objects.count() == 1


def test_merge_is_all_or_nothing(project, monkeypatch):
    entry = submit(project).entry

    def broken_audit(**kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("ledger.services.inbox.review.audit", broken_audit)
    with pytest.raises(RuntimeError):
        services.entry_merge(project=project, entry_id=entry.pk, by="lead")
    entry.refresh_from_db()
    assert entry.status == "pending"
    assert not Decision.objects.exists()


def test_reject_keeps_the_row_with_reason_and_no_decision(project):
    entry = submit(project).entry
    rejected = services.entry_reject(project=project, entry_id=entry.pk, by="lead", reason="duplicate")
    assert (rejected.status, rejected.reason, rejected.reviewed_by) == ("rejected", "duplicate", "lead")
    assert rejected.reviewed_at is not None
    assert rejected.decision_id is None and rejected.memory_id is None
    assert not Decision.objects.exists()


def test_reject_after_merge_is_a_conflict(project):
    entry = submit(project).entry
    services.entry_merge(project=project, entry_id=entry.pk, by="lead")
    with pytest.raises(services.Conflict):
        services.entry_reject(project=project, entry_id=entry.pk, by="lead")


def test_review_of_another_projects_entry_is_not_found(project, other_project):
    entry = submit(other_project).entry
    with pytest.raises(services.NotFound):
        services.entry_merge(project=project, entry_id=entry.pk, by="lead")
    with pytest.raises(services.NotFound):
        services.entry_reject(project=project, entry_id=entry.pk, by="lead")


def test_review_actions_are_audited(project):
    a = submit(project, slug="a").entry
    b = submit(project, slug="b").entry
    services.entry_merge(project=project, entry_id=a.pk, by="lead", via="dashboard")
    services.entry_reject(project=project, entry_id=b.pk, by="lead", reason="no")
    events = {
        (e.object_id, e.action, e.from_state, e.to_state, e.actor, e.via) for e in AuditEvent.objects.all()
    }
    assert (a.pk, "merge", "pending", "merged", "lead", "dashboard") in events
    assert (b.pk, "reject", "pending", "rejected", "lead", "api") in events


# --- decisions ----------------------------------------------------------------------------------


def decide(project, title="D", type="architectural", **kw):
    return services.decision_create(
        project=project,
        agent_name="lead",
        type=type,
        title=title,
        content=f"{title} content",
        by="lead",
        **kw,
    )


def test_created_decision_is_active_with_stored_tokens(project):
    decision = decide(project)
    assert decision.status == "active"
    assert decision.tokens > 0


def test_supersede_links_old_to_new(project):
    old, new = decide(project, "old"), decide(project, "new")
    services.decision_supersede(project=project, decision_id=old.pk, superseded_by_id=new.pk, by="lead")
    old.refresh_from_db()
    assert (old.status, old.superseded_by_id) == ("superseded", new.pk)


def test_supersede_by_itself_is_refused(project):
    d = decide(project)
    with pytest.raises(services.Invalid):
        services.decision_supersede(project=project, decision_id=d.pk, superseded_by_id=d.pk, by="lead")


def test_supersede_by_an_inactive_decision_is_a_conflict(project):
    old, new, newer = decide(project, "old"), decide(project, "new"), decide(project, "newer")
    services.decision_supersede(project=project, decision_id=new.pk, superseded_by_id=newer.pk, by="lead")
    with pytest.raises(services.Conflict):
        services.decision_supersede(project=project, decision_id=old.pk, superseded_by_id=new.pk, by="lead")


def test_supersede_of_an_already_superseded_decision_is_a_conflict(project):
    a, b, c = decide(project, "a"), decide(project, "b"), decide(project, "c")
    services.decision_supersede(project=project, decision_id=a.pk, superseded_by_id=b.pk, by="lead")
    with pytest.raises(services.Conflict):
        services.decision_supersede(project=project, decision_id=a.pk, superseded_by_id=c.pk, by="lead")


def test_supersede_cannot_close_a_cycle(project):
    a, b = decide(project, "a"), decide(project, "b")
    services.decision_supersede(project=project, decision_id=a.pk, superseded_by_id=b.pk, by="lead")
    # b → a would need a to be active; the chain stays acyclic whatever the order of requests.
    with pytest.raises((services.Conflict, services.Invalid)):
        services.decision_supersede(project=project, decision_id=b.pk, superseded_by_id=a.pk, by="lead")
    b.refresh_from_db()
    assert b.status == "active"


def test_supersede_by_a_decision_of_another_project_is_refused(project, other_project):
    mine, theirs = decide(project), decide(other_project)
    with pytest.raises(services.Invalid):
        services.decision_supersede(
            project=project, decision_id=mine.pk, superseded_by_id=theirs.pk, by="lead"
        )


def test_new_decision_can_supersede_several_at_once(project):
    a, b = decide(project, "a"), decide(project, "b")
    new = decide(project, "merged", supersedes=[a.pk, b.pk])
    assert set(Decision.objects.filter(superseded_by=new).values_list("pk", flat=True)) == {a.pk, b.pk}


def test_new_decision_superseding_an_inactive_one_is_refused_whole(project):
    a, b = decide(project, "a"), decide(project, "b")
    services.decision_archive(project=project, decision_id=b.pk, by="lead")
    with pytest.raises(services.Conflict):
        decide(project, "new", supersedes=[a.pk, b.pk])
    assert Decision.objects.count() == 2
    a.refresh_from_db()
    assert a.status == "active"


def test_archive_only_from_active(project):
    d = decide(project)
    assert services.decision_archive(project=project, decision_id=d.pk, by="lead").status == "archived"
    with pytest.raises(services.Conflict):
        services.decision_archive(project=project, decision_id=d.pk, by="lead")


def test_archived_decision_cannot_become_active_again(project):
    d = decide(project)
    services.decision_archive(project=project, decision_id=d.pk, by="lead")
    with pytest.raises(services.Conflict):
        services.decision_update(project=project, decision_id=d.pk, by="lead", status="active")


def test_edit_keeps_the_previous_text_as_a_revision(project):
    d = decide(project, "first")
    services.decision_edit(project=project, decision_id=d.pk, by="carol", title="second", rationale="r")
    services.decision_edit(project=project, decision_id=d.pk, by="dave", content="third content")
    revisions = list(DecisionRevision.objects.filter(decision=d))
    assert [(r.title, r.content, r.rationale, r.changed_by) for r in revisions] == [
        ("first", "first content", "", "carol"),
        ("second", "first content", "r", "dave"),
    ]
    d.refresh_from_db()
    assert (d.title, d.content) == ("second", "third content")


def test_edit_without_a_change_keeps_no_revision(project):
    d = decide(project, "same")
    services.decision_edit(project=project, decision_id=d.pk, by="lead", title="same")
    assert not DecisionRevision.objects.exists()


def test_edit_recounts_tokens(project):
    d = decide(project)
    before = d.tokens
    d = services.decision_edit(project=project, decision_id=d.pk, by="lead", content="word " * 200)
    assert d.tokens > before


def test_update_with_text_and_a_refused_status_change_changes_nothing(project):
    d = decide(project, "keep")
    services.decision_archive(project=project, decision_id=d.pk, by="lead")
    with pytest.raises(services.Conflict):
        services.decision_update(
            project=project, decision_id=d.pk, by="lead", title="changed", status="archived"
        )
    d.refresh_from_db()
    assert d.title == "keep"
    assert not DecisionRevision.objects.exists()


# --- memory -------------------------------------------------------------------------------------


def test_memory_keeps_provenance(project):
    memory = services.memory_record(
        project=project,
        agent_name="Alice",
        type="learning",
        content="Use UTC",
        tags="Cross-Team, time",
        session_id="s1",
        source="coordinator",
        injected_by="lead",
    )
    assert memory.content_sha256 == hashlib.sha256(b"Use UTC").hexdigest()
    assert memory.tokens == count_tokens("Use UTC")
    assert (memory.tags, memory.cross_team, memory.source, memory.injected_by) == (
        ["cross-team", "time"],
        True,
        "coordinator",
        "lead",
    )
    assert memory.importance == "medium"


def test_memory_edit_recomputes_hash_tokens_and_tag_flags(project):
    memory = services.memory_record(
        project=project, agent_name="Alice", type="learning", content="a", tags="cross-team"
    )
    edited = services.memory_edit(
        project=project, memory_id=memory.pk, by="lead", content="b " * 50, tags=["ops"], importance="high"
    )
    assert edited.content_sha256 == hashlib.sha256(("b " * 50).encode()).hexdigest()
    assert edited.tokens == count_tokens("b " * 50)
    assert (edited.cross_team, edited.tag_index, edited.importance_rank) == (False, ",ops,", 0)


def test_memory_archive_replaces_deleting(project):
    memory = services.memory_record(project=project, agent_name="Alice", type="learning", content="a")
    services.memory_archive(project=project, memory_id=memory.pk, by="lead")
    memory.refresh_from_db()
    assert memory.status == "archived"
    assert AuditEvent.objects.filter(object_type="agentmemory", action="archive").exists()


def test_memory_edit_scoped_to_an_agent_does_not_reach_another_agents_memory(project):
    memory = services.memory_record(project=project, agent_name="Alice", type="learning", content="a")
    bob = services.agent_get_or_create(project=project, name="Bob")
    with pytest.raises(services.NotFound):
        services.memory_edit(project=project, memory_id=memory.pk, by="Bob", agent=bob, content="hijack")


@pytest.mark.parametrize(
    "kwargs", [{"type": "core"}, {"importance": "urgent"}, {"content": ""}, {"tags": {"a": 1}}]
)
def test_invalid_memory_is_refused(project, kwargs):
    fields = {"agent_name": "Alice", "type": "learning", "content": "c"} | kwargs
    with pytest.raises(services.Invalid):
        services.memory_record(project=project, **fields)
    assert not AgentMemory.objects.exists()


# --- sessions -----------------------------------------------------------------------------------


def test_starting_a_session_closes_the_open_one(project):
    first = services.session_start(project=project, session_id="s1")
    second = services.session_start(project=project, session_id="s2", focus_area="api")
    first.refresh_from_db()
    assert first.ended_at is not None
    assert second.ended_at is None
    assert Session.objects.filter(project=project, ended_at__isnull=True).get().session_id == "s2"


def test_session_id_is_generated_when_not_given(project):
    session = services.session_start(project=project)
    assert session.session_id.startswith("session-")


def test_reused_session_id_is_a_conflict(project):
    services.session_start(project=project, session_id="s1")
    with pytest.raises(services.Conflict):
        services.session_start(project=project, session_id="s1")
    assert Session.objects.count() == 1
    assert Session.objects.get().ended_at is None


def test_update_current_session(project):
    services.session_start(project=project, session_id="s1", summary="first")
    session = services.session_update_current(
        project=project,
        focus_area="auth",
        active_issues=["#1", " ", "#2"],
        summary_append="second",
        serialized_state={"step": 3},
    )
    assert (session.focus_area, session.active_issues, session.summary, session.serialized_state) == (
        "auth",
        ["#1", "#2"],
        "first\nsecond",
        {"step": 3},
    )
    assert session.tokens > 0


def test_summary_replaces_and_end_closes(project):
    services.session_start(project=project, session_id="s1", summary="old")
    session = services.session_update_current(project=project, summary="new", end=True)
    assert (session.summary, session.is_open) == ("new", False)
    with pytest.raises(services.NotFound):
        services.session_update_current(project=project, summary="x")


def test_update_without_an_open_session_is_not_found(project):
    with pytest.raises(services.NotFound):
        services.session_update_current(project=project, focus_area="x")


def test_active_issues_must_be_strings(project):
    with pytest.raises(services.Invalid):
        services.session_start(project=project, active_issues=[1, 2])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"summary": "a\x00b"},
        {"active_issues": ["ok", "\ud800"]},
        {"serialized_state": {"note": "a\x00b"}},
        {"serialized_state": [float("nan")]},
    ],
)
def test_session_text_and_state_the_database_cannot_store_are_refused(project, kwargs):
    services.session_start(project=project, session_id="s1")
    with pytest.raises(services.Invalid):
        services.session_start(project=project, session_id="s2", **kwargs)
    with pytest.raises(services.Invalid):
        services.session_update_current(project=project, **kwargs)
    assert list(Session.objects.values_list("session_id", "ended_at", "summary")) == [("s1", None, "")]


# --- projects and tokens ------------------------------------------------------------------------


def test_project_create_then_update(db):
    project, created = services.project_create_or_update(slug="p1", name="One", coordinator="Lead")
    assert created and project.coordinator_agent == "Lead"
    project, created = services.project_create_or_update(slug="p1", workspace="/tmp/w")
    assert not created and (project.name, project.workspace) == ("One", "/tmp/w")


def test_project_slug_must_already_be_normal(db):
    with pytest.raises(services.Invalid):
        services.project_create_or_update(slug="My Project")


def test_token_is_stored_hashed(project):
    token, secret = services.token_issue(project=project, role="agent", agent_name="Alice")
    assert secret not in (token.token_hash, token.prefix + "x")
    assert token.token_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert token.agent.name == "Alice"
