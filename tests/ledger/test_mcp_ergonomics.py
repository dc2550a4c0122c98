"""What makes the MCP tools easy for a model to use (docs/mcp.md): `whoami`, the token's own agent as the
default, a mistyped agent name answered with the nearest names, compact rows, the context block as
markdown, and the prompt `start_of_turn` and the resource `canon://context`.

The tools run in worker threads with their own database connections, so these tests commit for real.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import TextContent, TextResourceContents

from ledger import services
from ledger.actions.frame import Caller
from ledger.mcp.server import build_server
from ledger.mcp.turn import GUIDE
from ledger.models import AgentMemory, Project
from tests.mcp_calls import answer, call, caller_for, recorded, refused, text
from tests.threads import run_async

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def alice(project: Project) -> Caller:
    return caller_for(project, "agent", "Alice")


@pytest.fixture
def marlow(project: Project) -> Caller:
    return caller_for(project, "agent", "Marlow")


@pytest.fixture
def lead(project: Project) -> Caller:
    return caller_for(project, "coordinator")


@pytest.fixture
def decision(project: Project) -> Any:
    return services.decision_create(
        project=project,
        agent_name="Lead",
        type="architectural",
        title="One database: PostgreSQL",
        content="Every service stores its rows in PostgreSQL.",
        by="lead",
    )


# whoami ---------------------------------------------------------------------------------------------


def test_whoami_answers_an_agent_tokens_project_agent_role_and_writes_left(project, settings, alice, marlow):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 3
    me = answer(call(alice, "whoami"))
    assert (me["project"], me["project_name"], me["agent"], me["role"]) == (
        "alpha",
        "Alpha",
        "Alice",
        "agent",
    )
    assert {"Alice", "Marlow"} <= set(me["agents"])
    assert me["limits"] == {"writes_per_minute": 3, "writes_left": 3}
    recorded(call(alice, "record_memory", type="learning", content="one"))
    recorded(call(marlow, "record_memory", type="learning", content="another agent's"))
    assert answer(call(alice, "whoami"))["limits"]["writes_left"] == 2


def test_whoami_answers_a_coordinator_token_with_no_agent_and_no_count(project, lead):
    me = answer(call(lead, "whoami"))
    assert (me["agent"], me["role"], me["coordinator_agent"]) == (
        None,
        "coordinator",
        project.coordinator_agent,
    )
    assert me["limits"]["writes_left"] is None


def test_whoami_says_no_count_when_the_limit_is_off(project, settings, alice):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 0
    assert answer(call(alice, "whoami"))["limits"] == {"writes_per_minute": 0, "writes_left": None}


# The token's own agent by default -------------------------------------------------------------------


def test_an_agent_records_and_lists_its_own_memory_without_naming_itself(alice):
    memory = recorded(call(alice, "record_memory", type="learning", content="Retry twice."))
    assert memory["agent_name"] == "Alice"
    assert [m["id"] for m in answer(call(alice, "list_memory"))["items"]] == [memory["id"]]
    assert answer(call(alice, "get_memory", memory_id=memory["id"]))["content"] == "Retry twice."


@pytest.mark.parametrize(
    ("tool", "arguments", "needle"),
    [
        ("record_memory", {"type": "learning", "content": "x"}, "agent_name: a coordinator token must say"),
        ("list_memory", {}, "agent_name: a coordinator token must say whose memories to list"),
        ("compile_context", {}, "agent: a coordinator token must say which agent the block is for"),
    ],
)
def test_a_coordinator_must_name_the_agent(lead, tool, arguments, needle):
    refused(call(lead, tool, **arguments), needle)
    assert not AgentMemory.objects.exists()


def test_get_memory_finds_another_agents_shared_memory_by_its_id_alone(project, alice, lead):
    shared = services.memory_record(
        project=project,
        agent_name="Bob",
        type="learning",
        content="Staging resets at 02:00.",
        tags="cross-team",
    )
    private = services.memory_record(project=project, agent_name="Bob", type="learning", content="mine")
    assert answer(call(alice, "get_memory", memory_id=shared.pk))["agent_name"] == "Bob"
    refused(call(alice, "get_memory", memory_id=private.pk), "private")
    refused(call(lead, "get_memory", memory_id=10**9), f"no memory {10**9} in this project")


def test_an_agent_compiles_its_own_block_as_markdown_text(alice, decision):
    result = call(alice, "compile_context", task="which database")
    block = answer(result)
    assert text(result) == block["text"]
    assert "One database: PostgreSQL" in text(result) and not text(result).lstrip().startswith("{")
    assert block["layers"]["boundaries"]["ids"] == [decision.pk]


# A name no agent has --------------------------------------------------------------------------------


def test_a_coordinators_typo_is_answered_with_the_nearest_name(lead, marlow, decision):
    message = refused(call(lead, "compile_context", agent="Marlwo"))
    assert message == (
        "Error executing tool compile_context: no agent 'Marlwo' in this project; did you mean: Marlow?"
    )
    assert "One database" in text(call(lead, "compile_context", agent="marlow"))


def test_a_name_near_none_lists_the_projects_agents(lead, alice, marlow):
    refused(call(lead, "list_memory", agent_name="Zebulon"), "no agent 'Zebulon'", "its agents:", "Alice, ")


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("list_inbox", {"agent": "Alcie"}),
        ("list_decisions", {"agent": "Alcie"}),
        ("search_memory", {"agent": "Alcie"}),
        ("list_episodes", {"agent": "Alcie"}),
        ("get_memory", {"agent_name": "Alcie", "memory_id": 1}),
        ("search", {"q": "cache", "agent": "Alcie"}),
    ],
)
def test_every_read_naming_an_agent_refuses_a_typo(lead, alice, tool, arguments):
    refused(call(lead, tool, **arguments), "no agent 'Alcie' in this project; did you mean: Alice?")


def test_the_coordinator_agent_is_known_without_rows(project, lead, decision):
    assert answer(call(lead, "compile_context", agent=project.coordinator_agent))["text"]


def test_a_coordinator_still_brings_a_new_agent_in_by_writing_for_it(lead):
    memory = recorded(call(lead, "record_memory", agent_name="Newcomer", type="core_context", content="Hi."))
    assert memory["agent_name"] == "Newcomer"
    assert answer(call(lead, "list_memory", agent_name="newcomer"))["total"] == 1


# Compact rows ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "keys"),
    [
        ("list_inbox", {}, {"id", "slug", "title", "status", "agent_name", "created_at"}),
        ("list_decisions", {}, {"id", "title", "status", "agent_name", "created_at"}),
        ("list_memory", {}, {"id", "title", "status", "agent_name", "created_at"}),
        ("search_memory", {"q": "retry"}, {"id", "title", "status", "agent_name", "created_at"}),
        ("list_episodes", {}, {"id", "run_id", "outcome", "agent_name", "created_at"}),
    ],
)
def test_compact_rows_hold_only_what_names_a_row(project, alice, decision, tool, arguments, keys):
    answer(call(alice, "submit_inbox_entry", slug="cache", type="technical", title="Cache", content="x"))
    answer(call(alice, "record_memory", type="learning", content="Retry twice " + "and wait " * 20))
    answer(call(alice, "record_episode", run_id="run-1", outcome="failed", tried="a retry"))
    full = answer(call(alice, tool, **arguments))
    brief = answer(call(alice, tool, compact=True, **arguments))
    assert brief["total"] == full["total"] == 1
    assert set(brief["items"][0]) == keys
    assert {key: full["items"][0][key] for key in keys - {"title"}} == {
        key: brief["items"][0][key] for key in keys - {"title"}
    }
    if tool in ("list_memory", "search_memory"):
        assert brief["items"][0]["title"].endswith("…") and len(brief["items"][0]["title"]) <= 80


# The prompt and the resource ------------------------------------------------------------------------


def prompt(caller: Caller, **arguments: str) -> Any:
    """The prompts listed and `start_of_turn` as `caller` gets it, or the error it was refused with."""

    async def run() -> Any:
        async with Client(build_server(lambda ctx: caller)) as client:
            listed = (await client.list_prompts()).prompts
            try:
                return listed, await client.get_prompt("start_of_turn", arguments)
            except MCPError as exc:
                return listed, exc

    return run_async(run)


def resource(caller: Caller) -> Any:
    """The resources listed and `canon://context` as `caller` reads it, or the error it was refused with."""

    async def run() -> Any:
        async with Client(build_server(lambda ctx: caller)) as client:
            listed = (await client.list_resources()).resources
            try:
                return listed, await client.read_resource("canon://context")
            except MCPError as exc:
                return listed, exc

    return run_async(run)


def test_the_start_of_turn_prompt_is_the_block_and_the_guide(settings, alice, decision):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 1
    recorded(call(alice, "record_memory", type="learning", content="the one write"))
    listed, got = prompt(alice, task="which database do we use")
    assert [(p.name, p.title, [a.name for a in p.arguments or []]) for p in listed] == [
        ("start_of_turn", "Start of turn", ["task", "agent"])
    ]
    [message] = got.messages
    assert message.role == "user" and isinstance(message.content, TextContent)
    assert "One database: PostgreSQL" in message.content.text
    assert message.content.text.endswith(GUIDE)


def test_the_start_of_turn_prompt_refuses_a_coordinator_naming_no_agent(lead, marlow):
    _, refusal = prompt(lead)
    assert isinstance(refusal, MCPError)
    assert refusal.message == "agent: a coordinator token must say which agent the block is for"
    _, refusal = prompt(lead, agent="Marlwo")
    assert isinstance(refusal, MCPError)
    assert refusal.message == "no agent 'Marlwo' in this project; did you mean: Marlow?"
    _, given = prompt(lead, agent="Marlow")
    assert given.messages[0].content.text.endswith(GUIDE)


def test_the_context_resource_is_the_agents_block_as_markdown(alice, decision):
    listed, got = resource(alice)
    assert [(str(r.uri), r.mime_type) for r in listed] == [("canon://context", "text/markdown")]
    [contents] = got.contents
    assert isinstance(contents, TextResourceContents) and contents.mime_type == "text/markdown"
    assert "One database: PostgreSQL" in contents.text


def test_the_context_resource_refuses_a_coordinator(lead):
    _, refusal = resource(lead)
    assert isinstance(refusal, MCPError) and "compile_context" in refusal.message
