"""The longest text each field takes (docs/api.md "Limits"): one over-long value is refused with the
same message over the API (a 400 naming the field) and over MCP (a tool error), and nothing is stored.
The transports of MCP (stdio, HTTP) are in test_mcp_transports.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from mcp import Client
from mcp_types import CallToolResult

from ledger import services
from ledger.actions.frame import Caller
from ledger.mcp.server import build_server
from ledger.models import AgentMemory, Decision, EntryStatus, InboxEntry, Project, Session
from ledger.services.fields import (
    ACTIVE_ISSUE_MAX_LENGTH,
    ACTIVE_ISSUES_MAX,
    CONTENT_MAX_LENGTH,
    FOCUS_MAX_LENGTH,
    RATIONALE_MAX_LENGTH,
    REASON_MAX_LENGTH,
    RUN_ID_MAX_LENGTH,
    SESSION_ID_MAX_LENGTH,
    SUMMARY_LINE_MAX_LENGTH,
    SUMMARY_MAX_LENGTH,
    TITLE_MAX_LENGTH,
)
from tests.mcp_calls import call, caller_for, text
from tests.threads import run_async

pytestmark = pytest.mark.django_db(transaction=True)

ENTRY: dict[str, Any] = {"slug": "use-postgres", "type": "technical", "content": "Use PostgreSQL."}
DECISION: dict[str, Any] = {
    "agent_name": "Alice",
    "type": "technical",
    "title": "Use PostgreSQL",
    "content": "pg",
}


def too_long(limit: int) -> str:
    return "x" * (limit + 1)


@pytest.fixture
def alice_mcp(project: Project) -> Caller:
    return caller_for(project, "agent", "Alice")


@pytest.fixture
def lead_mcp(project: Project) -> Caller:
    return caller_for(project, "coordinator")


def refused_alike(response: Any, result: CallToolResult, tool: str, field: str) -> None:
    """A 400 over the API whose details name `field`, and a tool error with the API's message."""
    assert response.status_code == 400, response.content
    body = response.json()
    assert [detail["field"] for detail in body["details"]] == [field]
    assert "at most" in body["error"]
    assert result.is_error
    assert text(result) == f"Error executing tool {tool}: {body['error']}"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("content", too_long(CONTENT_MAX_LENGTH)),
        ("rationale", too_long(RATIONALE_MAX_LENGTH)),
        ("title", too_long(TITLE_MAX_LENGTH)),
        ("run_id", too_long(RUN_ID_MAX_LENGTH)),
    ],
)
def test_an_over_long_proposal_is_refused_alike_and_not_stored(alice, alice_mcp, field, value):
    response = alice.post("/decisions/inbox", {**ENTRY, field: value})
    result = call(alice_mcp, "submit_inbox_entry", **{**ENTRY, field: value})
    refused_alike(response, result, "submit_inbox_entry", field)
    assert not InboxEntry.objects.exists()


@pytest.mark.parametrize(
    ("field", "value"),
    [("content", too_long(CONTENT_MAX_LENGTH)), ("rationale", too_long(RATIONALE_MAX_LENGTH))],
)
def test_an_over_long_decision_is_refused_alike_and_not_stored(coordinator, lead_mcp, field, value):
    response = coordinator.post("/decisions", {**DECISION, field: value})
    result = call(lead_mcp, "submit_decision", **{**DECISION, field: value})
    refused_alike(response, result, "submit_decision", field)
    assert not Decision.objects.exists()


def test_an_over_long_memory_is_refused_alike_and_not_stored(alice, alice_mcp):
    content = too_long(CONTENT_MAX_LENGTH)
    response = alice.post("/agents/alice/memory", {"type": "learning", "content": content})
    result = call(alice_mcp, "record_memory", agent_name="Alice", type="learning", content=content)
    refused_alike(response, result, "record_memory", "content")
    assert not AgentMemory.objects.exists()


def test_an_over_long_cross_team_memory_is_not_proposed(alice, alice_mcp):
    body = {"type": "learning", "content": too_long(CONTENT_MAX_LENGTH), "tags": ["cross-team"]}
    response = alice.post("/agents/alice/memory", body)
    result = call(alice_mcp, "record_memory", agent_name="Alice", **body)
    refused_alike(response, result, "record_memory", "content")
    assert not InboxEntry.objects.exists()


def test_an_over_long_injected_learning_is_refused_like_an_agents_memory(alice, lead_mcp):
    content = too_long(CONTENT_MAX_LENGTH)
    response = alice.post("/agents/alice/memory", {"type": "learning", "content": content})
    result = call(lead_mcp, "inject_learning", agent_name="Alice", category="best-practice", content=content)
    refused_alike(response, result, "inject_learning", "content")
    assert not AgentMemory.objects.exists()


def test_an_over_long_reject_reason_is_refused_alike_and_the_entry_stays_pending(
    project, coordinator, lead_mcp
):
    entry = services.entry_submit(project=project, agent_name="Alice", **ENTRY).entry
    reason = too_long(REASON_MAX_LENGTH)
    response = coordinator.post(f"/decisions/inbox/{entry.pk}/reject", {"reason": reason})
    result = call(lead_mcp, "reject_inbox_entry", entry_id=entry.pk, reason=reason)
    refused_alike(response, result, "reject_inbox_entry", "reason")
    entry.refresh_from_db()
    assert entry.status == EntryStatus.PENDING


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("session_id", too_long(SESSION_ID_MAX_LENGTH)),
        ("focus_area", too_long(FOCUS_MAX_LENGTH)),
        ("active_issues", ["issue"] * (ACTIVE_ISSUES_MAX + 1)),
        ("active_issues", [too_long(ACTIVE_ISSUE_MAX_LENGTH)]),
        ("summary", too_long(SUMMARY_MAX_LENGTH)),
    ],
)
def test_an_over_long_new_session_is_refused_alike_and_not_started(alice, alice_mcp, field, value):
    response = alice.post("/sessions", {field: value})
    result = call(alice_mcp, "start_session", **{field: value})
    refused_alike(response, result, "start_session", field)
    assert not Session.objects.exists()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("focus_area", too_long(FOCUS_MAX_LENGTH)),
        ("summary", too_long(SUMMARY_MAX_LENGTH)),
        ("summary_append", too_long(SUMMARY_LINE_MAX_LENGTH)),
    ],
)
def test_an_over_long_session_update_is_refused_alike_and_changes_nothing(
    project, alice, alice_mcp, field, value
):
    services.session_start(project=project, session_id="s1", focus_area="auth", summary="so far")
    response = alice.patch("/sessions/current", {field: value})
    result = call(alice_mcp, "update_session", **{field: value})
    refused_alike(response, result, "update_session", field)
    session = Session.objects.get()
    assert (session.focus_area, session.summary) == ("auth", "so far")


@pytest.mark.parametrize(
    ("field", "value"),
    [("content", too_long(CONTENT_MAX_LENGTH)), ("rationale", too_long(RATIONALE_MAX_LENGTH))],
)
def test_an_over_long_decision_edit_is_refused_and_keeps_the_text(project, coordinator, field, value):
    decision = services.decision_create(project=project, **DECISION, by="lead")
    response = coordinator.patch(f"/decisions/{decision.pk}", {field: value})
    assert response.status_code == 400
    assert response.json()["details"][0]["field"] == field
    decision.refresh_from_db()
    assert (decision.content, decision.rationale) == ("pg", "")


def test_an_over_long_memory_edit_is_refused_and_keeps_the_text(project, alice):
    memory = services.memory_record(project=project, agent_name="Alice", type="learning", content="x")
    response = alice.patch(f"/agents/alice/memory/{memory.pk}", {"content": too_long(CONTENT_MAX_LENGTH)})
    assert response.status_code == 400
    assert response.json()["details"][0]["field"] == "content"
    memory.refresh_from_db()
    assert memory.content == "x"


# The maxima stated in the schemas ------------------------------------------------------------------


def test_the_openapi_document_states_each_maximum(client):
    schemas = client.get("/api/openapi.json").json()["components"]["schemas"]
    entry = schemas["EntrySubmitIn"]["properties"]
    assert (entry["content"]["maxLength"], entry["rationale"]["maxLength"]) == (
        CONTENT_MAX_LENGTH,
        RATIONALE_MAX_LENGTH,
    )
    assert schemas["RejectIn"]["properties"]["reason"]["maxLength"] == REASON_MAX_LENGTH
    assert schemas["MemoryIn"]["properties"]["content"]["maxLength"] == CONTENT_MAX_LENGTH
    session = schemas["SessionPatchIn"]["properties"]
    assert session["summary_append"]["anyOf"][0]["maxLength"] == SUMMARY_LINE_MAX_LENGTH


def test_the_mcp_input_schemas_state_each_maximum(project):
    async def run() -> Any:
        async with Client(build_server(lambda ctx: None)) as client:  # type: ignore[arg-type,return-value]
            return {t.name: t.input_schema["properties"] for t in (await client.list_tools()).tools}

    tools = run_async(run)
    assert tools["submit_inbox_entry"]["content"]["maxLength"] == CONTENT_MAX_LENGTH
    assert tools["submit_inbox_entry"]["rationale"]["maxLength"] == RATIONALE_MAX_LENGTH
    assert tools["submit_decision"]["rationale"]["maxLength"] == RATIONALE_MAX_LENGTH
    assert tools["reject_inbox_entry"]["reason"]["maxLength"] == REASON_MAX_LENGTH
    assert tools["record_memory"]["content"]["maxLength"] == CONTENT_MAX_LENGTH
    assert tools["start_session"]["focus_area"]["maxLength"] == FOCUS_MAX_LENGTH
    assert tools["start_session"]["active_issues"]["maxItems"] == ACTIVE_ISSUES_MAX
    assert tools["update_session"]["summary_append"]["anyOf"][0]["maxLength"] == SUMMARY_LINE_MAX_LENGTH


def test_the_limits_table_of_the_docs_says_each_maximum():
    documented = {}
    for line in (Path(settings.BASE_DIR) / "docs" / "api.md").read_text().splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 4:
            documented[cells[0]] = cells[1]
    assert documented["`content`"] == f"{CONTENT_MAX_LENGTH:,}"
    assert documented["`rationale`"] == f"{RATIONALE_MAX_LENGTH:,}"
    assert documented["`title`"] == f"{TITLE_MAX_LENGTH:,}"
    assert documented["`reason`"] == f"{REASON_MAX_LENGTH:,}"
    assert documented["`run_id`"] == f"{RUN_ID_MAX_LENGTH:,}"
    assert documented["`session_id`"] == f"{SESSION_ID_MAX_LENGTH:,}"
    assert documented["`focus_area`"] == f"{FOCUS_MAX_LENGTH:,}"
    assert documented["`active_issues`"] == f"{ACTIVE_ISSUES_MAX} issues of {ACTIVE_ISSUE_MAX_LENGTH} each"
    assert documented["`summary`"] == f"{SUMMARY_MAX_LENGTH:,}"
    assert documented["`summary_append`"].startswith(f"{SUMMARY_LINE_MAX_LENGTH:,} ")
