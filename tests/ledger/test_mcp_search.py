"""The MCP tool `search` through the SDK's own client, in process, with a fixed caller (docs/mcp.md).

The tools run in worker threads with their own database connections, so these tests commit for real
(`transaction=True`) on the suite's database file.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from django.test import Client as HttpClient
from mcp import Client

from ledger import services
from ledger.actions.frame import Caller
from ledger.mcp.server import build_server
from ledger.models import ApiToken, Project, Source
from tests.mcp_calls import answer, call, caller_for, refused
from tests.threads import run_async

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def alice(project: Project) -> Caller:
    return caller_for(project, "agent", "Alice")


@pytest.fixture
def bob(project: Project) -> Caller:
    return caller_for(project, "agent", "Bob")


@pytest.fixture
def lead(project: Project) -> Caller:
    return caller_for(project, "coordinator")


@pytest.fixture
def rows(project: Project, alice: Caller, bob: Caller) -> dict[str, int]:
    """A decision, Alice's and Bob's private memories, a shared memory and Bob's pending proposal."""
    decision = services.decision_create(
        project=project,
        agent_name="Alice",
        type="process",
        title="Branch names follow `feature/AIPLAN-04-short-slug`",
        content="**What:** every branch is named after its ticket.",
        by="lead",
    )
    mine = services.memory_record(
        project=project, agent_name="Alice", type="learning", content="Rebase the branch before the review."
    )
    theirs = services.memory_record(
        project=project,
        agent_name="Bob",
        type="learning",
        content="Bob keeps a scratch branch named wip-łukasz.",
    )
    shared = services.memory_record(
        project=project,
        agent_name=project.coordinator_agent,
        type="learning",
        content="Never force-push a shared branch.",
        tags=["cross-team"],
        source=Source.COORDINATOR,
    )
    entry = services.entry_submit(
        project=project,
        agent_name="Bob",
        slug="bob-branch-prefix",
        type="process",
        title="Prefix branch names with the team",
        content="Branches start with the team's name.",
    ).entry
    return {
        "decision": decision.pk,
        "mine": mine.pk,
        "theirs": theirs.pk,
        "shared": shared.pk,
        "entry": entry.pk,
    }


def hits(result: Any) -> set[tuple[str, int]]:
    return {(hit["kind"], hit["id"]) for hit in answer(result)["hits"]}


def test_the_tool_is_listed_with_a_title_and_as_read_only(project):
    async def run() -> Any:
        async with Client(build_server(lambda ctx: None)) as client:  # type: ignore[arg-type,return-value]
            return (await client.list_tools()).tools

    [tool] = [t for t in run_async(run) if t.name == "search"]
    assert tool.title == "Search the ledger"
    assert tool.annotations is not None and tool.annotations.read_only_hint is True
    assert tool.input_schema["required"] == ["q"]
    assert set(tool.input_schema["properties"]) == {"q", "limit", "kinds", "agent", "inactive"}


def test_an_agent_searches_as_itself_by_default(alice, rows):
    assert hits(call(alice, "search", q="branch")) == {
        ("decision", rows["decision"]),
        ("memory", rows["mine"]),
        ("memory", rows["shared"]),
    }


def test_another_agents_private_memory_is_never_found(alice, rows):
    for q in ["scratch", "wip łukasz", "Bob keeps a scratch branch named wip-łukasz", "branch"]:
        assert ("memory", rows["theirs"]) not in hits(call(alice, "search", q=q, inactive=True)), q


def test_an_agent_may_not_search_as_another(alice, rows):
    refused(call(alice, "search", q="branch", agent="Bob"), "this token acts as 'Alice', not 'Bob'")


def test_a_coordinator_finds_every_agents_rows_and_the_inbox(lead, rows):
    assert hits(call(lead, "search", q="branch")) == {
        ("decision", rows["decision"]),
        ("memory", rows["mine"]),
        ("memory", rows["theirs"]),
        ("memory", rows["shared"]),
        ("entry", rows["entry"]),
    }


def test_a_coordinator_searches_as_the_agent_it_names(lead, rows):
    found = hits(call(lead, "search", q="branch", agent="bob", kinds=["memory"]))
    assert found == {("memory", rows["theirs"]), ("memory", rows["shared"])}


def test_kinds_is_a_list_or_one_comma_separated_text(lead, rows):
    as_list = hits(call(lead, "search", q="branch", kinds=["entry", "decision"]))
    as_text = hits(call(lead, "search", q="branch", kinds="entry,decision"))
    assert as_list == as_text == {("decision", rows["decision"]), ("entry", rows["entry"])}


def test_the_answer_is_the_api_answer(project, alice, rows):
    """The same JSON, but for the times, which the API writes to the millisecond."""
    token, secret = services.token_issue(project=project, role="agent", agent_name="Alice")
    over_http = HttpClient().get(
        "/api/projects/alpha/search",
        {"q": "AIPLAN-04 branch", "limit": 5},
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )
    caller = Caller(
        token=ApiToken.objects.select_related("project", "agent").get(pk=token.pk), project=project
    )
    over_mcp = answer(call(caller, "search", q="AIPLAN-04 branch", limit=5))
    assert timeless(over_mcp) == timeless(over_http.json())
    assert [at(hit) for hit in over_mcp["hits"]] == [at(hit) for hit in over_http.json()["hits"]]
    assert over_mcp["hits"][0]["id"] == rows["decision"]


def timeless(found: dict[str, Any]) -> dict[str, Any]:
    return {**found, "hits": [{k: v for k, v in hit.items() if k != "created_at"} for hit in found["hits"]]}


def at(hit: dict[str, Any]) -> datetime:
    moment = datetime.fromisoformat(hit["created_at"])
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


@pytest.mark.parametrize(
    ("arguments", "needle"),
    [
        ({"q": "  "}, "q: must not be blank"),
        ({"q": "x" * 2001}, "q: must be at most 2000 characters"),
        ({"q": "branch", "kinds": "decisions"}, "kinds: 'decisions': not one of"),
        ({"q": "branch", "kinds": ["entry"]}, "coordinators only"),
        ({"q": "branch", "limit": 0}, "limit"),
        ({"q": "branch", "limit": True}, "limit"),
        ({"q": "branch", "sort": "new"}, "unknown argument(s): sort"),
        ({"limit": 5}, "q"),
    ],
)
def test_bad_arguments_are_refused_naming_them(alice, rows, arguments, needle):
    refused(call(alice, "search", **arguments), needle)


def test_searching_is_not_a_write(alice, rows, settings):
    settings.CANON_AGENT_WRITES_PER_MINUTE = 1
    for _ in range(3):
        answer(call(alice, "search", q="branch"))
