"""Agent identity that look-alike Unicode cannot spoof: NFKC keys and UTS #39 skeletons."""

from __future__ import annotations

from importlib import import_module
from io import StringIO
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from ledger import mirror, services
from ledger.models import Agent, AgentMemory, ApiToken, Decision, InboxEntry, Project
from ledger.values import agent_key, agent_skeleton

# Written as escapes: the point of each is that it cannot be told apart from the ASCII name on screen.
CYRILLIC_ALICE = "\u0410lice"  # CYRILLIC CAPITAL LETTER A, then "lice"
FULLWIDTH_ALICE = "\uff21\uff4c\uff49\uff43\uff45"
SCRIPT_L_LEAD = "\u2113ead"  # SCRIPT SMALL L, then "ead"
GREEK_BOB = "B\u03bfb"  # GREEK SMALL LETTER OMICRON

ENTRY = {"slug": "use-postgres", "type": "architectural", "content": "Use PostgreSQL."}

migration = import_module("ledger.migrations.0004_agent_identity")


# --- values -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "key"),
    [(FULLWIDTH_ALICE, "alice"), (SCRIPT_L_LEAD, "lead"), ("Stra\u00dfe", "strasse"), ("\ufb03x", "ffix")],
)
def test_agent_key_is_nfkc_then_casefold(name, key):
    assert agent_key(name) == key


@pytest.mark.parametrize(("a", "b"), [(CYRILLIC_ALICE, "Alice"), (GREEK_BOB, "bob"), ("agent1", "agentl")])
def test_look_alike_keys_share_a_skeleton(a, b):
    assert agent_key(a) != agent_key(b)
    assert agent_skeleton(agent_key(a)) == agent_skeleton(agent_key(b))


def test_a_merely_similar_name_has_its_own_skeleton():
    assert agent_skeleton(agent_key("Alicia")) != agent_skeleton(agent_key("Alice"))


# --- services ---------------------------------------------------------------------------------


def test_a_look_alike_of_an_existing_agent_is_a_conflict_naming_it(project):
    services.agent_get_or_create(project=project, name="Alice")
    with pytest.raises(services.Conflict) as info:
        services.agent_get_or_create(project=project, name=CYRILLIC_ALICE)
    assert info.value.message == (
        f"agent name {CYRILLIC_ALICE!r} looks like the existing agent 'Alice'; "
        "use that name or a clearly different one"
    )
    assert Agent.objects.count() == 1


def test_fullwidth_name_is_the_same_agent(project):
    alice = services.agent_get_or_create(project=project, name="alice")
    assert services.agent_get_or_create(project=project, name=FULLWIDTH_ALICE) == alice
    assert Agent.objects.count() == 1


def test_script_l_is_the_same_agent_as_plain_l(project):
    lead = services.agent_get_or_create(project=project, name="lead")
    assert services.agent_get_or_create(project=project, name=SCRIPT_L_LEAD) == lead
    assert Agent.objects.count() == 1


def test_the_first_spelling_stays_the_display_name(project):
    agent = services.agent_get_or_create(project=project, name=FULLWIDTH_ALICE)
    assert (agent.name, agent.key, agent.skeleton) == (FULLWIDTH_ALICE, "alice", "alice")
    assert services.agent_get_or_create(project=project, name="Alice").name == FULLWIDTH_ALICE


def test_a_merely_similar_name_is_a_new_agent(project):
    alice = services.agent_get_or_create(project=project, name="Alice")
    alicia = services.agent_get_or_create(project=project, name="Alicia")
    assert alicia != alice and Agent.objects.count() == 2


def test_look_alikes_are_per_project(project, other_project):
    services.agent_get_or_create(project=project, name="Alice")
    agent = services.agent_get_or_create(project=other_project, name=CYRILLIC_ALICE)
    assert agent.project == other_project


def test_a_name_too_long_once_normalised_is_invalid(project):
    # U+FDFA is one character that NFKC spells out in 18.
    with pytest.raises(services.Invalid):
        services.agent_get_or_create(project=project, name="\ufdfa" * 20)


# --- API, command, importer -------------------------------------------------------------------


def test_api_submission_as_a_look_alike_is_409_naming_the_agent(project, make_api):
    make_api("agent", "Alice")
    coordinator = make_api("coordinator")
    response = coordinator.post("/decisions/inbox", {**ENTRY, "agent_name": CYRILLIC_ALICE})
    assert response.status_code == 409
    assert "'Alice'" in response.json()["error"]
    assert not InboxEntry.objects.exists()
    assert list(Agent.objects.values_list("name", flat=True)) == ["Alice"]


def test_api_submission_in_fullwidth_is_the_existing_agent(project, make_api):
    alice = make_api("agent", "alice")
    response = alice.post("/decisions/inbox", {**ENTRY, "agent_name": FULLWIDTH_ALICE})
    assert response.status_code == 201
    assert InboxEntry.objects.get().agent.name == "alice"
    assert Agent.objects.count() == 1


def test_issue_token_refuses_a_look_alike(project):
    services.agent_get_or_create(project=project, name="Alice")
    with pytest.raises(CommandError) as info:
        call_command("issue_token", "--project", "alpha", "--agent", CYRILLIC_ALICE, stdout=StringIO())
    assert info.value.returncode == 2
    assert "looks like the existing agent 'Alice'" in str(info.value)
    assert not ApiToken.objects.exists()


@pytest.fixture
def workspace(tmp_path: Path, project: Project) -> Path:
    project.workspace = str(tmp_path)
    project.save()
    return tmp_path


def test_an_inbox_file_from_a_look_alike_is_reported_not_imported(project, workspace):
    services.agent_get_or_create(project=project, name="Alice")
    inbox = workspace / ".squad/decisions/inbox"
    inbox.mkdir(parents=True)
    (inbox / "use-queues.md").write_text(
        f"---\nagent: {CYRILLIC_ALICE}\nslug: use-queues\ntype: architectural\n---\nUse a queue.\n",
        encoding="utf-8",
    )
    report = mirror.import_project(project)
    assert [(Path(p).name, "'Alice'" in reason) for p, reason in report.conflicts] == [
        ("use-queues.md", True)
    ]
    assert not InboxEntry.objects.exists() and Agent.objects.count() == 1


def test_a_decision_log_by_a_look_alike_is_skipped_with_the_reason(
    project, workspace, settings, tmp_path_factory
):
    settings.CANON_DATA_DIR = tmp_path_factory.mktemp("canon-data")
    services.agent_get_or_create(project=project, name="Marlow")
    (workspace / ".squad").mkdir()
    (workspace / ".squad/decisions.md").write_text(
        "# Squad Decisions\n\n### 2026-03-02: Queue jobs\n**By:** M\u0430rlow\n**What:** SKIP LOCKED.\n",
        encoding="utf-8",
    )
    report = mirror.import_project(project)
    reasons = dict(report.skipped)
    assert "looks like the existing agent 'Marlow'" in reasons[".squad/decisions.md"]
    assert not Decision.objects.exists() and Agent.objects.count() == 1


def test_a_history_folder_named_like_another_agent_is_skipped(project, workspace, settings, tmp_path_factory):
    settings.CANON_DATA_DIR = tmp_path_factory.mktemp("canon-data")
    services.agent_get_or_create(project=project, name="juno")
    history = workspace / ".squad/agents/jun\u043e/history.md"  # CYRILLIC SMALL LETTER O
    history.parent.mkdir(parents=True)
    history.write_text("# History\n\n## Learnings\n\n- Tests run in parallel.\n", encoding="utf-8")
    report = mirror.import_project(project)
    reasons = {Path(p).parent.name: r for p, r in report.skipped}
    assert "looks like the existing agent 'juno'" in reasons["jun\u043e"]
    assert not AgentMemory.objects.exists() and Agent.objects.count() == 1


# --- migration 0004 ---------------------------------------------------------------------------


def _row(id: int, name: str, key: str) -> SimpleNamespace:
    return SimpleNamespace(id=id, name=name, key=key)


def test_migration_recomputes_keys_and_fills_skeletons():
    rows = [_row(1, FULLWIDTH_ALICE, FULLWIDTH_ALICE.casefold()), _row(2, CYRILLIC_ALICE, "\u0430lice")]
    assert migration.identities(rows) == {1: ("alice", "alice"), 2: ("\u0430lice", "alice")}


def test_migration_keeps_both_agents_that_collide_after_nfkc():
    # Before NFKC these were two agents; the one already holding the normalised key keeps it.
    rows = [_row(1, FULLWIDTH_ALICE, FULLWIDTH_ALICE.casefold()), _row(2, "alice", "alice")]
    assert migration.identities(rows) == {1: (FULLWIDTH_ALICE.casefold(), "alice"), 2: ("alice", "alice")}


def test_migration_gives_the_normalised_key_to_the_earliest_when_both_would_move():
    rows = [_row(1, FULLWIDTH_ALICE, "old-1"), _row(2, "\uff41lice", "old-2")]
    assert migration.identities(rows) == {1: ("alice", "alice"), 2: ("old-2", "alice")}


def test_migration_runs_on_rows_of_the_database(project):
    Agent.objects.create(project=project, key=FULLWIDTH_ALICE.casefold(), name=FULLWIDTH_ALICE)
    Agent.objects.create(project=project, key="alice", name="alice")
    Agent.objects.create(project=project, key=SCRIPT_L_LEAD, name=SCRIPT_L_LEAD)
    migration.fill_identity(SimpleNamespace(get_model=lambda app, model: Agent), None)
    rows = set(Agent.objects.values_list("name", "key", "skeleton"))
    assert rows == {
        (FULLWIDTH_ALICE, FULLWIDTH_ALICE.casefold(), "alice"),
        ("alice", "alice", "alice"),
        (SCRIPT_L_LEAD, "lead", "lead"),
    }
