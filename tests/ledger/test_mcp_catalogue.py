"""What the MCP server tells a host about itself and its tools (docs/mcp.md "What each tool tells a host"),
and that each tool keeps it: the write limit holds for every tool that is not read-only, every read
answers past it, and every answer is of the shape its output schema states (`tests.mcp_calls.call`
checks each one with jsonschema).

The tools run in worker threads with their own database connections, so these tests commit for real.
"""

from __future__ import annotations

import inspect
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from mcp import Client
from mcp_types import Tool

from ledger import services
from ledger.mcp.frame import REGISTRY
from ledger.mcp.server import build_server
from ledger.models import AgentMemory, Compilation, Decision, Episode, InboxEntry, Project, Session
from tests.mcp_calls import answer, call, caller_for, recorded, refused
from tests.threads import run_async

pytestmark = pytest.mark.django_db(transaction=True)


def listing() -> dict[str, Tool]:
    async def run() -> list[Tool]:
        async with Client(build_server(lambda ctx: None)) as client:  # type: ignore[arg-type,return-value]
            return (await client.list_tools()).tools

    return {tool.name: tool for tool in run_async(run)}


def server_version() -> str | None:
    async def run() -> str | None:
        async with Client(build_server(lambda ctx: None)) as client:  # type: ignore[arg-type,return-value]
            return client.server_info.version if client.server_info else None

    return run_async(run)


# The catalogue --------------------------------------------------------------------------------------


def test_the_server_reports_the_packages_version(project):
    assert server_version() == version("canon") != ""


def test_every_tool_has_a_title_hints_and_an_output_schema_with_properties(project, settings):
    settings.CANON_MCP_SQUAD_ALIAS = True
    for name, tool in listing().items():
        hints = tool.annotations
        assert tool.title and hints is not None and hints.title == tool.title, name
        assert hints.open_world_hint is False, name
        if hints.read_only_hint:
            assert hints.idempotent_hint is True and hints.destructive_hint is None, name
        else:
            assert hints.read_only_hint is False, name
            assert hints.destructive_hint is not None and hints.idempotent_hint is not None, name
        schema = tool.output_schema
        assert schema is not None and schema["type"] == "object", name
        assert schema.get("properties") and schema.get("required"), f"{name}: not just an object"


# The hints each tool must give (docs/mcp.md): the writes that can replace or end what is there, and
# those whose retry changes nothing more.
DESTRUCTIVE = {
    "merge_inbox_entry",
    "reject_inbox_entry",
    "submit_decision",
    "import_memory",
    "update_session",
    "start_session",
    "scribe_run",
}
NOT_IDEMPOTENT = {"submit_decision", "start_session", "update_session", "compile_context"}
READS = {
    "whoami",
    "list_inbox",
    "list_decisions",
    "get_decision",
    "list_memory",
    "get_memory",
    "search_memory",
    "list_episodes",
    "current_session",
    "search",
}


def test_the_hints_say_what_each_tool_does(project, settings):
    settings.CANON_MCP_SQUAD_ALIAS = True
    tools = listing()
    assert {name for name, t in tools.items() if t.annotations and t.annotations.read_only_hint} == READS
    writes = {name: t.annotations for name, t in tools.items() if name not in READS}
    assert {name for name, hints in writes.items() if hints and hints.destructive_hint} == DESTRUCTIVE
    assert {name for name, hints in writes.items() if hints and not hints.idempotent_hint} == NOT_IDEMPOTENT


# How the table marks a hint a read-only tool does not give (an en dash).
NOT_APPLICABLE = "\u2013"


def docs_table() -> dict[str, list[str]]:
    """The rows of docs/mcp.md's table of titles and hints, by tool."""
    text = (Path(django_settings.BASE_DIR) / "docs" / "mcp.md").read_text(encoding="utf-8")
    header = "| tool | title | role | read-only | destructive | idempotent |"
    table = text.split(header, 1)[1].split("\n\n", 1)[0]
    rows = {}
    for line in table.splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows[cells[0].strip("`")] = cells[1:]
    return rows


def test_the_docs_table_says_each_tools_title_role_and_hints(project, settings):
    settings.CANON_MCP_SQUAD_ALIAS = True
    tools = listing()
    rows = docs_table()
    assert set(rows) == set(tools)
    coordinator = {spec.name for spec in REGISTRY if spec.coordinator}
    for name, tool in tools.items():
        hints = tool.annotations
        assert hints is not None
        title, role, read_only, destructive, idempotent = rows[name]
        assert title == tool.title, name
        assert (role == "coordinator") == (name in coordinator), name
        assert read_only == ("yes" if hints.read_only_hint else "no"), name
        assert destructive == (
            NOT_APPLICABLE if hints.read_only_hint else "yes" if hints.destructive_hint else "no"
        ), name
        assert idempotent == ("yes" if hints.idempotent_hint else "no"), name


def test_squad_decide_is_listed_only_when_the_setting_says_so(project, settings, alice):
    assert "squad_decide" not in listing()
    refused(call(alice, "squad_decide", slug="x", type="scope", content="x"), "Unknown tool: squad_decide")
    settings.CANON_MCP_SQUAD_ALIAS = True
    tools = listing()
    alias, tool = tools["squad_decide"], tools["submit_inbox_entry"]
    assert "submit_inbox_entry" in (alias.description or "")
    assert alias.input_schema["properties"] == tool.input_schema["properties"]
    assert alias.input_schema["required"] == tool.input_schema["required"]
    assert alias.output_schema == tool.output_schema
    assert alias.annotations is not None and tool.annotations is not None
    assert alias.annotations.model_dump(exclude={"title"}) == tool.annotations.model_dump(exclude={"title"})


# Writes and the write limit -------------------------------------------------------------------------


@pytest.fixture
def alice(project: Project) -> Any:
    return caller_for(project, "agent", "Alice")


@pytest.fixture
def lead(project: Project) -> Any:
    return caller_for(project, "coordinator")


def entry_id(project: Project) -> dict[str, Any]:
    entry = services.entry_submit(
        project=project, agent_name="Carol", slug="cache-reads", type="technical", content="Cache reads."
    ).entry
    return {"entry_id": entry.pk}


# Valid arguments of each tool that writes, with what the project needs first: the first call succeeds,
# so a refusal of the second can only be the limit's.
AGENT_WRITES: dict[str, Any] = {
    "submit_inbox_entry": lambda project: {"slug": "cache", "type": "technical", "content": "Cache reads."},
    "squad_decide": lambda project: {"slug": "cache", "type": "technical", "content": "Cache reads."},
    "record_memory": lambda project: {"type": "learning", "content": "Retry twice."},
    "record_episode": lambda project: {"run_id": "run-1", "outcome": "failed", "tried": "a retry"},
    "start_session": lambda project: {},
    "update_session": lambda project: {"summary_append": "one more line"},
    "compile_context": lambda project: {"run_id": "run-1"},
    "scribe_run": lambda project: {"run_id": "run-1", "started_at": "2020-01-01T00:00:00Z"},
}
COORDINATOR_WRITES: dict[str, Any] = {
    "merge_inbox_entry": entry_id,
    "reject_inbox_entry": entry_id,
    "submit_decision": lambda project: {
        "agent_name": "Alice",
        "type": "technical",
        "title": "Use Postgres",
        "content": "One database.",
    },
    "inject_learning": lambda project: {
        "agent_name": "Alice",
        "content": "Test first.",
        "category": "best-practice",
    },
    "export_memory": lambda project: {},
    "import_memory": lambda project: {},
}


def test_every_tool_that_is_not_read_only_has_a_write_case(project, settings):
    settings.CANON_MCP_SQUAD_ALIAS = True
    writes = {name for name, t in listing().items() if not (t.annotations and t.annotations.read_only_hint)}
    assert writes == AGENT_WRITES.keys() | COORDINATOR_WRITES.keys()


@pytest.mark.parametrize("tool", sorted(AGENT_WRITES))
def test_an_agents_write_is_refused_once_its_writes_are_spent(project, settings, tool):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 1
    settings.CANON_MCP_SQUAD_ALIAS = True
    services.session_start(project=project, by="lead")
    writer = caller_for(project, "agent", "Writer")
    arguments = AGENT_WRITES[tool](project)
    answer(call(writer, tool, **arguments))
    refused(call(writer, tool, **arguments), "'Writer' is past 1 writes per minute")


@pytest.mark.parametrize("tool", sorted(COORDINATOR_WRITES))
def test_a_coordinators_write_refuses_an_agent_and_is_not_counted(project, settings, tmp_path, tool, alice):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 1
    project.workspace = str(tmp_path)
    project.save(update_fields=["workspace"])
    lead = caller_for(project, "coordinator")
    arguments = COORDINATOR_WRITES[tool](project)
    recorded(call(alice, "record_memory", type="learning", content="the one write"))
    refused(call(alice, tool, **arguments), "this route needs a coordinator token")
    answer(call(lead, tool, **arguments))
    answer(call(lead, "start_session"))  # a coordinator's writes are not counted


def test_every_read_answers_after_the_writes_are_spent(project, settings, alice):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 1
    decision = services.decision_create(
        project=project, agent_name="Lead", type="technical", title="Use Postgres", content="pg", by="lead"
    )
    services.session_start(project=project, by="lead")
    services.episode_record(project=project, agent_name="Alice", run_id="run-1", outcome="failed", tried="a")
    memory = recorded(call(alice, "record_memory", type="learning", content="Use Postgres everywhere."))
    reads = {
        "whoami": {},
        "list_inbox": {"status": "all"},
        "list_decisions": {},
        "get_decision": {"decision_id": decision.pk},
        "list_memory": {},
        "get_memory": {"memory_id": memory["id"]},
        "search_memory": {"q": "postgres"},
        "list_episodes": {},
        "current_session": {},
        "search": {"q": "postgres"},
    }
    assert set(reads) == READS
    for tool, arguments in reads.items():
        answer(call(alice, tool, **arguments))
    assert answer(call(alice, "whoami"))["limits"]["writes_left"] == 0


def test_a_refused_write_of_an_agent_stores_nothing(project, settings, alice):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 1
    recorded(call(alice, "record_memory", type="learning", content="the one write"))
    refused(call(alice, "submit_inbox_entry", slug="late", type="scope", content="x"), "writes per minute")
    assert answer(call(alice, "list_inbox", status="all"))["total"] == 0


# The idempotent hint, kept: the same call again leaves the ledger and the workspace as one call did.


def state(project: Project) -> dict[str, Any]:
    """What the ledger holds (rows and what they say, not when they were touched) and the workspace's
    files. The logs of mirror runs are left out: they say when a run happened, not what is there."""
    files = {}
    if project.workspace:
        root = Path(project.workspace)
        files = {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
    return {
        "entries": list(
            InboxEntry.objects.values_list("pk", "status", "content", "decision_id", "memory_id")
        ),
        "decisions": list(Decision.objects.values_list("pk", "status", "title")),
        "memories": list(AgentMemory.objects.values_list("pk", "status", "content", "expires_at")),
        "episodes": list(Episode.objects.values_list("pk", "outcome", "tried")),
        "sessions": list(Session.objects.values_list("pk", "summary", "ended_at")),
        "compilations": Compilation.objects.count(),
        "files": files,
    }


@pytest.mark.parametrize("tool", sorted(AGENT_WRITES.keys() | COORDINATOR_WRITES.keys()))
def test_a_write_made_twice_changes_more_only_when_it_says_it_is_not_idempotent(
    project, settings, tmp_path, tool
):
    settings.CANON_MCP_SQUAD_ALIAS = True
    project.workspace = str(tmp_path)
    project.save(update_fields=["workspace"])
    services.session_start(project=project, by="lead")
    caller = (
        caller_for(project, "coordinator")
        if tool in COORDINATOR_WRITES
        else caller_for(project, "agent", "Alice")
    )
    arguments = (COORDINATOR_WRITES | AGENT_WRITES)[tool](project)
    hints = listing()[tool].annotations
    assert hints is not None
    answer(call(caller, tool, **arguments))
    once = state(project)
    call(caller, tool, **arguments)  # the retry: answered again, or refused as already done
    assert (state(project) == once) is bool(hints.idempotent_hint), tool


# Tools whose arguments are not a request body of the API: `compile_context` takes the query parameters
# of GET /context; the mirror's tools take none.
NO_REQUEST_SHAPE = {"compile_context", "export_memory", "import_memory"}


def test_every_write_tool_takes_its_actions_request_shape(project, settings):
    """The fields of a write are declared once, in `ledger.actions.shapes`: the API's body and the
    tool's parameters both come from there, descriptions and stated rules included."""
    settings.CANON_MCP_SQUAD_ALIAS = True
    tools = listing()
    for spec in REGISTRY:
        if spec.read_only or spec.name in NO_REQUEST_SHAPE:
            continue
        assert spec.takes is not None, f"{spec.name} spells its fields itself"
        properties = tools[spec.name].input_schema["properties"]
        declared = spec.takes.model_json_schema()["properties"]
        own = inspect.signature(spec.fn).parameters
        compared = [name for name in declared if name not in spec.omit and name not in own]
        assert compared, spec.name
        for name in compared:
            assert untitled(properties[name]) == untitled(declared[name]), (spec.name, name)


def untitled(schema: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in schema.items() if key != "title"}
