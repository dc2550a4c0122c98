"""The MCP tools through the SDK's own client, in process, with a fixed caller (docs/mcp.md).

The tools run in worker threads with their own database connections, so these tests commit for real
(`transaction=True`) on the suite's database file.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import IntegrityError
from mcp import Client

from ledger import services
from ledger.actions.frame import Caller
from ledger.mcp.server import build_server
from ledger.models import AgentMemory, InboxEntry, MemoryType, Project, Source
from tests.mcp_calls import answer, call, caller_for, recorded, refused
from tests.threads import run_async

pytestmark = pytest.mark.django_db(transaction=True)

TOOLS = {
    "whoami",
    "submit_inbox_entry",
    "list_inbox",
    "merge_inbox_entry",
    "reject_inbox_entry",
    "submit_decision",
    "list_decisions",
    "get_decision",
    "record_memory",
    "list_memory",
    "get_memory",
    "search_memory",
    "search",
    "inject_learning",
    "record_episode",
    "list_episodes",
    "start_session",
    "current_session",
    "update_session",
    "compile_context",
    "export_memory",
    "import_memory",
    "scribe_run",
}


@pytest.fixture
def alice(project: Project) -> Caller:
    return caller_for(project, "agent", "Alice")


@pytest.fixture
def bob(project: Project) -> Caller:
    return caller_for(project, "agent", "Bob")


@pytest.fixture
def lead(project: Project) -> Caller:
    return caller_for(project, "coordinator")


def propose(caller: Caller, slug: str = "use-postgres", **fields: Any) -> dict[str, Any]:
    return answer(
        call(caller, "submit_inbox_entry", **{"slug": slug, "type": "technical", "content": "x", **fields})
    )


# The catalogue ------------------------------------------------------------------------------------


def test_every_tool_is_listed_with_one_line_and_described_parameters(project):
    async def run() -> Any:
        async with Client(build_server(lambda ctx: None)) as client:  # type: ignore[arg-type,return-value]
            return (await client.list_tools()).tools

    tools = run_async(run)
    assert {t.name for t in tools} == TOOLS
    for t in tools:
        assert t.description and "\n" not in t.description, t.name
        for name, schema in t.input_schema.get("properties", {}).items():
            assert schema.get("description"), f"{t.name}.{name}"


def test_squad_decide_is_submit_inbox_entry_under_another_name(alice, settings):
    settings.CANON_MCP_SQUAD_ALIAS = True
    entry = answer(call(alice, "squad_decide", slug="Use Redis!", type="architectural", content="cache"))
    assert entry["slug"] == "use-redis"
    assert InboxEntry.objects.get().agent.name == "Alice"


# Inbox --------------------------------------------------------------------------------------------


def test_agent_proposes_as_itself_and_gets_the_api_shape(alice):
    entry = propose(alice, tags=["db"], run_id="run-1")
    assert entry["agent_name"] == "Alice"
    assert entry["status"] == "pending"
    assert entry["source"] == Source.AGENT
    assert entry["tags"] == ["db"]
    assert set(entry) >= {"id", "slug", "decision_id", "memory_id", "created_at", "reviewed_by"}


def test_agent_cannot_propose_as_another_agent(alice):
    refused(
        call(alice, "submit_inbox_entry", slug="x", type="technical", content="x", agent_name="Bob"),
        "acts as 'Alice'",
    )
    assert not InboxEntry.objects.exists()


def test_coordinator_proposes_for_the_agent_it_names(lead):
    refused(call(lead, "submit_inbox_entry", slug="x", type="technical", content="x"), "agent_name")
    entry = propose(lead, agent_name="Carol")
    assert (entry["agent_name"], entry["source"]) == ("Carol", Source.COORDINATOR)


def test_retry_of_a_decided_decollided_entry_says_where_it_was_recorded(alice, bob, lead):
    propose(alice)
    entry = propose(bob)
    assert entry["slug"] == "use-postgres--bob"
    answer(call(lead, "merge_inbox_entry", entry_id=entry["id"]))
    refused(
        call(bob, "submit_inbox_entry", slug="use-postgres", type="technical", content="again"),
        "already recorded as use-postgres--bob",
    )


def test_list_inbox_pages_and_says_the_total(alice):
    for n in range(3):
        propose(alice, slug=f"s{n}")
    first = answer(call(alice, "list_inbox", limit=2))
    assert (first["total"], len(first["items"])) == (3, 2)
    rest = answer(call(alice, "list_inbox", limit=2, offset=2))
    assert [e["slug"] for e in rest["items"]] == ["s0"]


def test_list_inbox_hides_another_agents_private_learning(alice, bob, lead):
    propose(bob, slug="secret", type="learning")
    assert answer(call(alice, "list_inbox"))["total"] == 0
    assert answer(call(lead, "list_inbox"))["total"] == 1


def test_another_projects_entries_are_neither_listed_nor_decided(alice, other_project):
    entry = propose(alice)
    stranger = caller_for(other_project, "coordinator")
    assert answer(call(stranger, "list_inbox"))["total"] == 0
    refused(call(stranger, "merge_inbox_entry", entry_id=entry["id"]), f"no inbox entry {entry['id']}")
    assert InboxEntry.objects.get().status == "pending"


def test_coordinator_merges_an_entry_into_a_decision(alice, lead):
    entry = propose(alice)
    merged = answer(call(lead, "merge_inbox_entry", entry_id=entry["id"]))
    assert merged["status"] == "merged"
    assert "memory_id" not in merged
    decision = answer(call(alice, "get_decision", decision_id=merged["decision_id"]))
    assert decision["source_entry_id"] == entry["id"]


def test_merging_twice_is_refused_with_the_state(alice, lead):
    entry = propose(alice)
    answer(call(lead, "merge_inbox_entry", entry_id=entry["id"]))
    refused(call(lead, "merge_inbox_entry", entry_id=entry["id"]), "already merged")


@pytest.mark.parametrize("tool", ["merge_inbox_entry", "reject_inbox_entry"])
def test_an_agent_token_cannot_decide_entries(alice, tool):
    entry = propose(alice)
    refused(call(alice, tool, entry_id=entry["id"]), "coordinator")
    assert InboxEntry.objects.get().status == "pending"


def test_coordinator_rejects_with_a_reason(alice, lead):
    entry = propose(alice)
    rejected = answer(call(lead, "reject_inbox_entry", entry_id=entry["id"], reason="not now"))
    assert (rejected["status"], rejected["reason"]) == ("rejected", "not now")


# Decisions ----------------------------------------------------------------------------------------


def test_coordinator_records_a_decision_that_supersedes_another(lead, alice):
    old = answer(call(lead, "submit_decision", agent_name="Alice", type="technical", title="A", content="a"))
    new = answer(
        call(
            lead,
            "submit_decision",
            agent_name="Alice",
            type="technical",
            title="B",
            content="b",
            supersedes=[old["id"]],
        )
    )
    assert new["supersedes"] == [old["id"]]
    listed = answer(call(alice, "list_decisions"))
    assert [d["title"] for d in listed["items"]] == ["B"]
    assert answer(call(alice, "list_decisions", status="all"))["total"] == 2


def test_an_agent_token_cannot_record_a_decision(alice):
    refused(
        call(alice, "submit_decision", agent_name="Alice", type="technical", title="A", content="a"),
        "coordinator",
    )


def test_another_projects_decision_is_not_found(lead, other_project):
    decision = answer(call(lead, "submit_decision", agent_name="Alice", type="scope", title="A", content="a"))
    stranger = caller_for(other_project, "agent", "Alice")
    refused(call(stranger, "get_decision", decision_id=decision["id"]), "no decision")


# Memory -------------------------------------------------------------------------------------------


def test_agent_records_its_own_memory(alice):
    memory = recorded(
        call(alice, "record_memory", agent_name="alice", type="learning", content="retry twice")
    )
    assert (memory["agent_name"], memory["source"], memory["category"]) == ("Alice", "agent", "")


def test_agent_cannot_record_memory_for_another_agent(alice):
    refused(call(alice, "record_memory", agent_name="Bob", type="learning", content="x"), "acts as")
    assert not AgentMemory.objects.exists()


def test_an_agents_cross_team_memory_becomes_a_proposal_and_says_so(alice):
    proposed = answer(
        call(alice, "record_memory", agent_name="Alice", type="learning", content="share", tags="cross-team")
    )
    entry = proposed["entry"]
    assert (proposed["kind"], "memory" in proposed) == ("proposal", False)
    assert entry["status"] == "pending" and entry["slug"].startswith("learning-")
    assert proposed["message"].startswith(f"proposed as inbox entry {entry['id']}")
    assert "a coordinator will merge it" in proposed["message"]
    assert not AgentMemory.objects.exists()


def test_coordinator_records_memory_for_an_agent_saying_who_injected_it(lead):
    memory = recorded(call(lead, "record_memory", agent_name="Bob", type="core_context", content="x"))
    assert (memory["source"], memory["injected_by"]) == ("coordinator", "coordinator")


def test_another_agents_private_memory_is_refused_and_unlisted(alice, bob):
    private = recorded(call(bob, "record_memory", agent_name="Bob", type="learning", content="mine"))
    refused(call(alice, "get_memory", agent_name="Bob", memory_id=private["id"]), "private")
    assert answer(call(alice, "list_memory", agent_name="Bob"))["total"] == 0
    assert answer(call(bob, "list_memory", agent_name="Bob"))["total"] == 1


def test_search_memory_filters_by_tags_text_and_type(lead, alice):
    for content, tags, kind in [("use retries", "ops", "learning"), ("ui colours", "ui", "pattern")]:
        answer(call(lead, "record_memory", agent_name="Alice", type=kind, content=content, tags=tags))
    assert [m["content"] for m in answer(call(alice, "search_memory", tags=["ops"]))["items"]] == [
        "use retries"
    ]
    assert answer(call(alice, "search_memory", q="COLOUR"))["total"] == 1
    assert answer(call(alice, "search_memory", type="pattern", importance="medium"))["total"] == 1
    assert answer(call(alice, "search_memory", status="archived"))["total"] == 0


def test_search_memory_refuses_a_status_outside_its_set(alice):
    refused(call(alice, "search_memory", status="gone"), "status: 'gone' is not one of")


def test_coordinator_injects_a_learning_for_one_agent(lead):
    memory = answer(
        call(lead, "inject_learning", agent_name="Alice", content="test first", category="best-practice")
    )
    assert (memory["type"], memory["category"], memory["source"]) == (
        "learning",
        "best-practice",
        "coordinator",
    )
    assert memory["injected_by"] == "coordinator"


def test_a_cross_team_learning_needs_no_agent_and_reaches_every_agent(lead, bob):
    answer(
        call(
            lead, "inject_learning", content="ask before deleting", category="preference", tags=["cross-team"]
        )
    )
    assert answer(call(bob, "search_memory"))["total"] == 1
    refused(call(lead, "inject_learning", content="x", category="preference"), "agent_name")


def test_inject_learning_refuses_agents_and_unknown_categories(alice, lead):
    refused(
        call(alice, "inject_learning", agent_name="Alice", content="x", category="preference"), "coordinator"
    )
    refused(
        call(lead, "inject_learning", agent_name="Alice", content="x", category="gossip"),
        "category: 'gossip' is not one of",
    )
    assert not AgentMemory.objects.exists()


def test_a_memory_category_outside_the_set_is_refused_by_the_database(project):
    memory = services.memory_record(
        project=project, agent_name="Alice", type=MemoryType.LEARNING, content="x"
    )
    with pytest.raises(IntegrityError):
        AgentMemory.objects.filter(pk=memory.pk).update(category="gossip")


# Sessions -----------------------------------------------------------------------------------------


def test_session_start_update_and_end(alice):
    answer(call(alice, "start_session", session_id="s-1", focus_area="billing", serialized_state={"step": 1}))
    current = answer(call(alice, "current_session"))
    assert (current["session_id"], current["serialized_state"]) == ("s-1", {"step": 1})
    kept = answer(call(alice, "update_session", summary_append="did a thing"))
    assert kept["serialized_state"] == {"step": 1} and "did a thing" in kept["summary"]
    cleared = answer(call(alice, "update_session", clear_serialized_state=True))
    assert cleared["serialized_state"] is None
    ended = answer(call(alice, "update_session", end=True))
    assert ended["ended_at"] is not None
    refused(call(alice, "current_session"), "no open session")


def test_a_reused_session_id_is_refused(alice):
    answer(call(alice, "start_session", session_id="s-1"))
    refused(call(alice, "start_session", session_id="s-1"), "s-1")


# Context, Scribe, mirror --------------------------------------------------------------------------


def test_compile_context_for_self_and_not_for_another_agent(lead, alice, bob):
    answer(
        call(lead, "submit_decision", agent_name="Lead", type="architectural", title="Postgres", content="pg")
    )
    block = answer(call(alice, "compile_context", agent="Alice", run_id="run-1"))
    assert "Postgres" in block["text"]
    assert set(block["layers"]) == {"boundaries", "memory", "relevant", "session"}
    refused(call(alice, "compile_context", agent="Bob"), "acts as")
    assert answer(call(lead, "compile_context", agent="Bob", child=True))["layers"]["memory"]["ids"] == []


def test_scribe_run_merges_the_runs_learnings(alice):
    propose(alice, slug="retry", type="learning", run_id="run-7")
    report = answer(call(alice, "scribe_run", run_id="run-7", started_at="2020-01-01T00:00:00Z"))
    assert [e["slug"] for e in report["merged"]] == ["retry"]
    refused(call(alice, "scribe_run", run_id="run-7", started_at="yesterday"), "started_at")
    refused(
        call(alice, "scribe_run", run_id="run-7", started_at="2020-01-01T00:00:00Z", agent_name="Bob"),
        "acts as",
    )


def test_coordinator_exports_and_imports_the_workspace(lead, project, tmp_path):
    refused(call(lead, "export_memory"), "could not run")
    project.workspace = str(tmp_path)
    project.save(update_fields=["workspace"])
    lead = caller_for(project, "coordinator")
    assert answer(call(lead, "export_memory"))["ok"] is True
    assert answer(call(lead, "import_memory"))["ok"] is True


@pytest.mark.parametrize("tool", ["export_memory", "import_memory"])
def test_an_agent_token_cannot_run_the_mirror(alice, tool):
    refused(call(alice, tool), "coordinator")


# Bad input ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "needle"),
    [
        ("submit_inbox_entry", {"slug": "x", "type": "idea", "content": "x"}, "type: 'idea' is not one of"),
        ("submit_inbox_entry", {"slug": "x", "type": "scope", "content": 5}, "content:"),
        ("submit_inbox_entry", {"slug": "x", "type": "scope"}, "content: Field required"),
        ("submit_inbox_entry", {"slug": "x", "type": "scope", "content": "x", "title": "t" * 301}, "title:"),
        ("submit_inbox_entry", {"slug": "!!!", "type": "scope", "content": "x"}, "slug"),
        ("submit_inbox_entry", {"slug": "x", "type": "scope", "content": "x", "tags": 7}, "tags"),
        ("submit_inbox_entry", {"slug": "x", "type": "scope", "content": "a\x00b"}, "NUL"),
        ("list_inbox", {"limit": 1001}, "limit:"),
        ("list_inbox", {"limit": "many"}, "limit:"),
        ("list_inbox", {"offset": -1}, "offset:"),
        ("list_inbox", {"agent": "a\x00"}, "agent: must not contain the NUL"),
        ("list_inbox", {"status": "open"}, "status: 'open' is not one of"),
        ("list_decisions", {"type": "learning"}, "type:"),
        ("get_decision", {"decision_id": 10**30}, "decision_id:"),
        ("merge_inbox_entry", {"entry_id": "one"}, "entry_id:"),
        ("search_memory", {"q": "lone \ud800"}, "surrogate"),
        ("record_memory", {"agent_name": "Alice", "type": "note", "content": "x"}, "type: 'note'"),
        ("record_memory", {"agent_name": "x" * 65, "type": "learning", "content": "x"}, "agent_name:"),
        ("compile_context", {"agent": "Alice", "max_items": 201}, "max_items:"),
        ("compile_context", {"agent": ""}, "agent:"),
        ("start_session", {"session_id": "s" * 101}, "session_id:"),
        ("update_session", {"active_issues": "one"}, "active_issues:"),
        ("scribe_run", {"run_id": "", "started_at": "2020-01-01T00:00:00Z"}, "run_id"),
        (
            "scribe_run",
            {"run_id": "r", "started_at": "2020-01-01T00:00:00Z", "approved": "maybe"},
            "approved:",
        ),
    ],
)
def test_bad_input_is_a_readable_tool_error(alice, tool, arguments, needle):
    message = refused(call(alice, tool, **arguments), needle)
    assert "validation error for" not in message  # one line per field, not pydantic's report


def test_writes_count_against_the_agents_write_limit(alice, settings):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 2
    propose(alice, slug="a")
    answer(call(alice, "record_memory", agent_name="Alice", type="learning", content="x"))
    refused(call(alice, "start_session"), "writes per minute")


# Strict ids ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("entry_id", [True, 1.0, "1"])
def test_an_entry_id_that_is_not_an_integer_is_refused_and_nothing_merged(alice, lead, entry_id):
    propose(alice)
    refused(call(lead, "merge_inbox_entry", entry_id=entry_id), "invalid arguments: entry_id:")
    assert InboxEntry.objects.get().status == "pending"


@pytest.mark.parametrize(
    ("tool", "arguments", "name"),
    [
        ("reject_inbox_entry", {"entry_id": True}, "entry_id"),
        ("get_decision", {"decision_id": True}, "decision_id"),
        ("get_memory", {"agent_name": "Alice", "memory_id": True}, "memory_id"),
        (
            "record_memory",
            {"agent_name": "Alice", "type": "learning", "content": "y", "corrects": True},
            "corrects",
        ),
        ("list_inbox", {"limit": 1.0}, "limit"),
        ("list_inbox", {"offset": "0"}, "offset"),
    ],
)
def test_every_id_and_count_must_be_an_integer(alice, tool, arguments, name):
    refused(call(alice, tool, **arguments), f"invalid arguments: {name}:")


def test_a_superseded_id_that_is_not_an_integer_is_refused_and_nothing_recorded(lead):
    old = answer(call(lead, "submit_decision", agent_name="Alice", type="technical", title="A", content="a"))
    arguments = {"agent_name": "Alice", "type": "technical", "title": "B", "content": "b"}
    refused(call(lead, "submit_decision", **arguments, supersedes=[True]), "supersedes.0:")
    assert [d["id"] for d in answer(call(lead, "list_decisions", status="all"))["items"]] == [old["id"]]


# Unknown arguments --------------------------------------------------------------------------------


def test_an_unknown_argument_is_refused_naming_it_and_the_tools_arguments(alice):
    message = refused(call(alice, "list_inbox", state="merged"))
    assert message == (
        "Error executing tool list_inbox: unknown argument(s): state; "
        "this tool takes: status, type, agent, run_id, q, limit, offset, compact"
    )


def test_a_write_with_an_unknown_argument_stores_nothing(alice):
    refused(
        call(alice, "submit_inbox_entry", slug="x", type="scope", content="x", titel="typo"),
        "unknown argument(s): titel;",
    )
    assert not InboxEntry.objects.exists()


def test_a_tool_without_arguments_says_it_takes_none(lead):
    refused(call(lead, "current_session", session_id="s1"), "this tool takes: no arguments")


# Roles before writes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("merge_inbox_entry", {"entry_id": 1}),
        ("reject_inbox_entry", {"entry_id": 1}),
        ("submit_decision", {"agent_name": "Alice", "type": "technical", "title": "A", "content": "a"}),
        ("inject_learning", {"agent_name": "Alice", "category": "preference", "content": "a"}),
        ("export_memory", {}),
        ("import_memory", {}),
    ],
)
def test_a_coordinator_tool_refuses_an_agent_without_using_its_writes(alice, settings, tool, arguments):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 1
    for _ in range(3):
        refused(call(alice, tool, **arguments), "this route needs a coordinator token")
    assert propose(alice)["status"] == "pending"
