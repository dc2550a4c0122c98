"""What one agent wrote reaches another agent's context only after a person acted on it.

Every REST operation of the agent API and every MCP tool has a case in a registry. A case is one of:

- WRITES: agent A (an agent token) writes hostile text through it; agent B's compiled context, without
  and with a task that matches the text, and B's reads of memories, episodes, decisions and other
  agents' private proposals hold none of it, before and after A's Scribe closes the run.
- COORDINATOR_ONLY: A tries to write through it and is refused (403, or a tool error); then the same
  checks.
- READS: it writes nothing another agent reads; A calls it with the hostile text in its parameters,
  then the same checks.
- SESSION: the open session is the team's and reaches B's session layer by design, but only under
  "Current Session", naming A and within the session budget; the summary of the session once ended
  names A as well.

The enumerations come from the URL configuration and the server's tool list: an operation or a tool
without a case fails `test_every_rest_operation_has_a_case` or `test_every_mcp_tool_has_a_case`, so a
new route forces a decision here. Workspace files are covered the same way, one case per file kind a
sync reads. The positive controls at the end show that the text does reach B once a coordinator merged
it, so the checks cannot pass for want of looking.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.test import Client

from ledger import services
from ledger.models import AgentMemory, Decision, InboxEntry, Project, TokenRole
from tests.conftest import ApiClient
from tests.governance_cases import (
    OLD_START,
    TASK_WORDS,
    A,
    B,
    World,
    accepted,
    answered,
    assert_context_clean,
    assert_reached,
    assert_unreached,
    contexts,
    holds,
    hostile,
    marker_for,
    mcp_tools,
    refused,
    rest_operations,
    split_section,
    task_for,
    tool_ok,
    tool_refused,
    unattributed,
)

# The MCP tools run in a thread of their own, on a connection of their own: they see committed rows only.
pytestmark = pytest.mark.django_db(transaction=True)

WRITES = "writes"
COORDINATOR_ONLY = "coordinator only"
READS = "reads only"
SESSION = "session"

Act = Callable[[World, str], None]


@dataclass(frozen=True)
class Case:
    kind: str
    why: str
    act: Act


@pytest.fixture(autouse=True)
def _roomy_write_rate(settings) -> None:
    # Each case makes a few dozen writes as one agent; the rate limit has tests of its own.
    settings.CANON_AGENT_WRITES_PER_MINUTE = 10_000
    # Every tool the server can list has a case, the alias a setting lists included.
    settings.CANON_MCP_SQUAD_ALIAS = True


@pytest.fixture
def world(project: Project, alice: ApiClient, bob: ApiClient, coordinator: ApiClient, tmp_path, settings):
    project.workspace = str(tmp_path / "workspace")
    project.save()
    (tmp_path / "workspace").mkdir()
    settings.CANON_DATA_DIR = tmp_path / "data"
    return World(project=project, a=alice, b=bob, coordinator=coordinator, root=tmp_path / "workspace")


_numbers = itertools.count(1)


@pytest.fixture
def marker() -> str:
    return marker_for(next(_numbers))


def run_of(marker: str) -> str:
    return f"run-{marker.lower()}"


# ---------------------------------------------------------------------------------------------
# What A writes


# Every kind of proposal, each high importance: the decision types, the memory types shared with the
# team, and the memory types kept private.
PROPOSALS = [
    ("architectural", ""),
    ("scope", ""),
    ("process", ""),
    ("technical", ""),
    ("learning", "cross-team"),
    ("pattern", "cross-team, db"),
    ("update", "cross-team"),
    ("learning", ""),
    ("pattern", ""),
    ("update", ""),
]


def proposal(marker: str, n: int, type_: str, tags: str) -> dict[str, object]:
    return {
        "slug": f"{marker.lower()}-{n}",
        "type": type_,
        "title": f"{marker} {TASK_WORDS}",
        "content": hostile(marker),
        "rationale": hostile(marker),
        "tags": tags,
        "importance": "high",
        "run_id": run_of(marker),
    }


MEMORIES = [
    ("core_context", ""),
    ("learning", ""),
    ("pattern", "db"),
    ("update", ""),
    ("learning", "cross-team"),
    ("pattern", "cross-team"),
    ("update", "cross-team, db"),
]


def memory_body(marker: str, type_: str, tags: str) -> dict[str, object]:
    return {"type": type_, "importance": "high", "content": f"{type_} {hostile(marker)}", "tags": tags}


def episode_body(marker: str) -> dict[str, object]:
    return {
        "run_id": run_of(marker),
        "outcome": "failed",
        "tried": hostile(marker),
        "difficulties": hostile(marker),
        "feedback": hostile(marker),
        "files": [f"src/{marker}.py"],
        "change_url": f"https://example.com/{marker}",
    }


def post_inbox(w: World, m: str) -> None:
    for n, (type_, tags) in enumerate(PROPOSALS):
        accepted(w.a.post("/decisions/inbox", proposal(m, n, type_, tags)))
    for other in (B, w.project.coordinator_agent):
        response = w.a.post("/decisions/inbox", {**proposal(m, 99, "architectural", ""), "agent_name": other})
        assert response.status_code == 403, response.content


def submit_by_tool(tool: str) -> Act:
    def act(w: World, m: str) -> None:
        for n, (type_, tags) in enumerate(PROPOSALS):
            tool_ok(w.a_tool(tool, **proposal(m, n, type_, tags)))
        for other in (B, w.project.coordinator_agent):
            tool_refused(w.a_tool(tool, **proposal(m, 99, "architectural", ""), agent_name=other))

    return act


def post_memory(w: World, m: str) -> None:
    for type_, tags in MEMORIES:
        accepted(w.a.post(f"/agents/{A}/memory", memory_body(m, type_, tags)))
    assert w.a.post(f"/agents/{A}/memory", memory_body(m, "core_context", "cross-team")).status_code == 400
    for other in (B, w.project.coordinator_agent):
        assert w.a.post(f"/agents/{other}/memory", memory_body(m, "learning", "")).status_code == 403
    for extra in ({"pinned": True}, {"category": "best-practice"}):
        response = w.a.post(f"/agents/{A}/memory", {**memory_body(m, "learning", "cross-team"), **extra})
        assert response.status_code == 403, response.content


def record_memory_by_tool(w: World, m: str) -> None:
    for type_, tags in MEMORIES:
        tool_ok(w.a_tool("record_memory", agent_name=A, **memory_body(m, type_, tags)))
    tool_refused(w.a_tool("record_memory", agent_name=A, **memory_body(m, "core_context", "cross-team")))
    for other in (B, w.project.coordinator_agent):
        tool_refused(w.a_tool("record_memory", agent_name=other, **memory_body(m, "learning", "")))
    tool_refused(w.a_tool("record_memory", agent_name=A, **memory_body(m, "learning", "x"), pinned=True))


# A reviewer who read a flagged entry whole merges it anyway (docs/api.md, the merge's `confirm_flagged`).
CONFIRMED = {"confirm_flagged": True}


def shared_memory_of_a(w: World, content: str = "Staging resets at 02:00 every night.") -> int:
    """A cross-team memory of A, proposed by A and merged by a coordinator (a person acted on it)."""
    entry = accepted(
        w.a.post(
            f"/agents/{A}/memory",
            {"type": "learning", "importance": "high", "content": content, "tags": "cross-team"},
        )
    ).json()
    return accepted(w.coordinator.post(f"/decisions/inbox/{entry['id']}/merge", CONFIRMED)).json()[
        "memory_id"
    ]


def patch_memory(w: World, m: str) -> None:
    own = accepted(w.a.post(f"/agents/{A}/memory", memory_body(m, "learning", "db"))).json()["id"]
    answered(w.a.patch(f"/agents/{A}/memory/{own}", {"content": hostile(m), "importance": "high"}))
    answered(w.a.patch(f"/agents/{A}/memory/{own}", {"tags": ["db", "cross-team"]}))
    answered(w.a.patch(f"/agents/{A}/memory/{own}", {"tags": "cross-team", "status": "active"}))
    shared = shared_memory_of_a(w)
    for change in (
        {"content": hostile(m)},
        {"content": hostile(m), "tags": ["cross-team"]},
        {"status": "archived"},
        {"status": "active", "content": hostile(m)},
    ):
        answered(w.a.patch(f"/agents/{A}/memory/{shared}", change))
    bob_memory = accepted(w.b.post(f"/agents/{B}/memory", memory_body("benign", "learning", ""))).json()["id"]
    assert w.a.patch(f"/agents/{B}/memory/{bob_memory}", {"content": hostile(m)}).status_code == 403


def post_episode(w: World, m: str) -> None:
    accepted(w.a.post("/episodes", episode_body(m)))
    assert w.a.post("/episodes", {**episode_body(m), "agent_name": B}).status_code == 403


def record_episode_by_tool(w: World, m: str) -> None:
    tool_ok(w.a_tool("record_episode", **episode_body(m)))
    tool_refused(w.a_tool("record_episode", **episode_body(m), agent_name=B))


def everything_a_proposes(w: World, m: str) -> None:
    """A cross-team memory, an architectural entry, a learning (private and shared): what a run leaves
    for its Scribe."""
    for type_, tags in MEMORIES:
        answered(w.a.post(f"/agents/{A}/memory", memory_body(m, type_, tags)))
    for n, (type_, tags) in enumerate(PROPOSALS):
        accepted(w.a.post("/decisions/inbox", proposal(m, n, type_, tags)))
        body = {**proposal(m, n, type_, tags), "slug": f"{m.lower()}-norun-{n}", "run_id": ""}
        accepted(w.a.post("/decisions/inbox", body))


def post_scribe(w: World, m: str) -> None:
    everything_a_proposes(w, m)
    for run in (run_of(m), f"other-{m.lower()}"):
        w.scribe(w.a, run)
        w.scribe(w.a, run, outcome=m[:40])
    refused(
        w.a.post(
            "/scribe",
            {
                "run_id": run_of(m),
                "started_at": OLD_START,
                "approved": True,
                "agent_name": w.project.coordinator_agent,
            },
        )
    )
    refused(w.a.post("/scribe", {"run_id": run_of(m), "started_at": OLD_START, "agent_name": B}))


def scribe_by_tool(w: World, m: str) -> None:
    for type_, tags in MEMORIES:
        w.a_tool("record_memory", agent_name=A, **memory_body(m, type_, tags))
    for n, (type_, tags) in enumerate(PROPOSALS):
        tool_ok(w.a_tool("submit_inbox_entry", **proposal(m, n, type_, tags)))
    for run in (run_of(m), f"other-{m.lower()}"):
        tool_ok(w.a_tool("scribe_run", run_id=run, started_at=OLD_START, approved=True))
    tool_refused(
        w.a_tool(
            "scribe_run",
            run_id=run_of(m),
            started_at=OLD_START,
            approved=True,
            agent_name=w.project.coordinator_agent,
        )
    )


# --- refused: coordinator only -----------------------------------------------------------------


def a_entry(w: World, m: str, type_: str = "learning", tags: str = "cross-team") -> int:
    return accepted(w.a.post("/decisions/inbox", proposal(m, 7, type_, tags))).json()["id"]


def merge_route(action: str) -> Act:
    def act(w: World, m: str) -> None:
        for type_, tags in (("learning", "cross-team"), ("architectural", "")):
            entry = accepted(w.a.post("/decisions/inbox", proposal(m, len(type_), type_, tags))).json()["id"]
            refused(w.a.post(f"/decisions/inbox/{entry}/{action}", CONFIRMED))

    return act


def reject_route(w: World, m: str) -> None:
    theirs = accepted(w.b.post("/decisions/inbox", proposal("bobs", 1, "architectural", ""))).json()["id"]
    refused(w.a.post(f"/decisions/inbox/{theirs}/reject", {"reason": hostile(m)}))
    own = a_entry(w, m)
    refused(w.a.post(f"/decisions/inbox/{own}/reject", {"reason": hostile(m)}))


def post_decision(w: World, m: str) -> None:
    for type_ in ("architectural", "scope"):
        body = {"agent_name": A, "type": type_, "title": f"{m} {TASK_WORDS}", "content": hostile(m)}
        refused(w.a.post("/decisions", body))


def a_benign_decision(w: World) -> int:
    body = {"agent_name": B, "type": "architectural", "title": "Use Postgres", "content": "One database."}
    return accepted(w.coordinator.post("/decisions", body)).json()["id"]


def patch_decision(w: World, m: str) -> None:
    decision = a_benign_decision(w)
    refused(w.a.patch(f"/decisions/{decision}", {"title": f"{m} {TASK_WORDS}", "content": hostile(m)}))
    refused(w.a.patch(f"/decisions/{decision}", {"rationale": hostile(m)}))


def near_duplicates_of_a(w: World, m: str) -> tuple[int, int]:
    first = accepted(w.a.post(f"/agents/{A}/memory", memory_body(m, "learning", "db"))).json()["id"]
    second = accepted(
        w.a.post(
            f"/agents/{A}/memory", {**memory_body(m, "learning", "db"), "content": hostile(m) + " again"}
        )
    ).json()["id"]
    return first, second


def merge_memory(w: World, m: str) -> None:
    first, second = near_duplicates_of_a(w, m)
    refused(w.a.post(f"/agents/{A}/memory/{second}/merge", {"keep": first}))


def dismiss_similar(w: World, m: str) -> None:
    _, second = near_duplicates_of_a(w, m)
    refused(w.a.post(f"/agents/{A}/memory/{second}/dismiss-similar"))


def hostile_workspace(w: World, m: str) -> None:
    """Files A leaves in the workspace, for a route that would import them."""
    w.write(".squad/memory/note.md", f"---\nauthor: {B}\nimportance: high\n---\n{hostile(m)}")
    w.write(
        ".squad/decisions/inbox/x.md",
        f"---\nagent: {w.project.coordinator_agent}\nslug: {m.lower()}\ntype: architectural\n---\n{hostile(m)}",
    )


def mirror_route(kind: str) -> Act:
    def act(w: World, m: str) -> None:
        hostile_workspace(w, m)
        refused(w.a.post(f"/memory/{kind}"))

    return act


def mirror_tool(tool: str) -> Act:
    def act(w: World, m: str) -> None:
        hostile_workspace(w, m)
        tool_refused(w.a_tool(tool))

    return act


def merge_by_tool(w: World, m: str) -> None:
    for type_, tags in (("learning", "cross-team"), ("architectural", "")):
        entry = tool_ok(w.a_tool("submit_inbox_entry", **proposal(m, len(type_), type_, tags)))
        tool_refused(w.a_tool("merge_inbox_entry", entry_id=entry["id"], confirm_flagged=True))


def reject_by_tool(w: World, m: str) -> None:
    tool_refused(w.a_tool("reject_inbox_entry", entry_id=a_entry(w, m), reason=hostile(m)))


def submit_decision_by_tool(w: World, m: str) -> None:
    for type_ in ("architectural", "scope"):
        tool_refused(
            w.a_tool(
                "submit_decision", agent_name=A, type=type_, title=f"{m} {TASK_WORDS}", content=hostile(m)
            )
        )


def inject_by_tool(w: World, m: str) -> None:
    for agent_name in (None, B, A):
        arguments = {"agent_name": agent_name} if agent_name else {}
        tool_refused(
            w.a_tool(
                "inject_learning",
                content=hostile(m),
                category="best-practice",
                importance="high",
                tags="cross-team",
                **arguments,
            )
        )


# --- reads: called with the hostile text in the parameters ---------------------------------------


def get(path: str, **params: object) -> Act:
    def act(w: World, m: str) -> None:
        answered(
            w.a.get(path.replace("MARKER", m), **{k: str(v).replace("MARKER", m) for k, v in params.items()})
        )

    return act


def get_own_entry(w: World, m: str) -> None:
    answered(w.a.get(f"/decisions/inbox/{a_entry(w, m, 'learning', '')}"))


def get_context(w: World, m: str) -> None:
    accepted(w.a.get("/context", agent=A, task=task_for(m), run_id=run_of(m)))
    refused(w.a.get("/context", agent=B, task=task_for(m), run_id=run_of(m)))


def compile_by_tool(w: World, m: str) -> None:
    tool_ok(w.a_tool("compile_context", agent=A, task=task_for(m), run_id=run_of(m)))
    tool_refused(w.a_tool("compile_context", agent=B, task=task_for(m), run_id=run_of(m)))


def read_tool(tool: str, **arguments: object) -> Act:
    def act(w: World, m: str) -> None:
        w.a_tool(
            tool,
            **{k: str(v).replace("MARKER", m) if isinstance(v, str) else v for k, v in arguments.items()},
        )

    return act


def auth(client: ApiClient) -> dict[str, str]:
    return {"Authorization": f"Bearer {client.token}"}


def get_outside_projects(path: str) -> Act:
    """A path of the API outside `/projects/`, with the hostile text in its query."""

    def act(w: World, m: str) -> None:
        answered(w.a.client.get(f"/api{path}", {"q": m}, headers=auth(w.a)))

    return act


def send(method: str, path: str) -> Act:
    def act(w: World, m: str) -> None:
        if method in ("GET", "HEAD"):
            answered(
                getattr(w.a.client, method.lower())(
                    w.a.url(path.replace("MARKER", m)), {"q": m}, headers=auth(w.a)
                )
            )
        else:
            answered(w.a.send(method.lower(), path.replace("MARKER", m), {"content": hostile(m)}))

    return act


# --- sessions ------------------------------------------------------------------------------------


def session_fields(m: str) -> dict[str, object]:
    return {"focus_area": hostile(m), "active_issues": [f"{m} {TASK_WORDS}"], "summary": hostile(m)}


def post_session(w: World, m: str) -> None:
    accepted(w.a.post("/sessions", {"session_id": f"s-{m}", **session_fields(m)}))


def patch_session(w: World, m: str) -> None:
    accepted(w.b.post("/sessions", {"session_id": f"s-{m}", "focus_area": "Bob's benign focus"}))
    accepted(w.a.patch("/sessions/current", session_fields(m)))
    accepted(w.a.patch("/sessions/current", {"summary_append": hostile(m)}))


def start_session_by_tool(w: World, m: str) -> None:
    tool_ok(w.a_tool("start_session", session_id=f"s-{m}", **session_fields(m)))


def update_session_by_tool(w: World, m: str) -> None:
    accepted(w.b.post("/sessions", {"session_id": f"s-{m}", "focus_area": "Bob's benign focus"}))
    tool_ok(w.a_tool("update_session", **session_fields(m)))
    tool_ok(w.a_tool("update_session", summary_append=hostile(m)))


# ---------------------------------------------------------------------------------------------
# The registry: every REST operation


P = "/projects/{project}"
INBOX = P + "/decisions/inbox"
MEMORY = P + "/agents/{name}/memory"
UNKNOWN_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD")

REST: dict[str, Case] = {
    f"POST {INBOX}": Case(WRITES, "A proposes every entry type, as itself and naming others", post_inbox),
    f"GET {INBOX}": Case(READS, "lists entries", get("/decisions/inbox", q="MARKER", status="all")),
    f"GET {INBOX}/{{entry_id}}": Case(READS, "reads one entry", get_own_entry),
    f"POST {INBOX}/{{entry_id}}/merge": Case(
        COORDINATOR_ONLY, "a merge is a person's act", merge_route("merge")
    ),
    f"POST {INBOX}/{{entry_id}}/promote": Case(COORDINATOR_ONLY, "the same as merge", merge_route("promote")),
    f"POST {INBOX}/{{entry_id}}/reject": Case(
        COORDINATOR_ONLY, "a rejection is a person's act", reject_route
    ),
    f"GET {P}/context": Case(
        READS,
        "compiles A's own block; with run_id it records the compilation, which no agent reads",
        get_context,
    ),
    f"GET {P}/decisions": Case(READS, "lists decisions", get("/decisions", q="MARKER", status="all")),
    f"GET {P}/search": Case(READS, "searches the ledger", get("/search", q="MARKER", inactive="true")),
    f"POST {P}/decisions": Case(COORDINATOR_ONLY, "a decision is recorded by a person", post_decision),
    f"GET {P}/decisions/{{decision_id}}": Case(READS, "reads one decision", get("/decisions/1")),
    f"PATCH {P}/decisions/{{decision_id}}": Case(
        COORDINATOR_ONLY, "decisions are edited by people", patch_decision
    ),
    f"POST {P}/episodes": Case(
        WRITES, "A records its own run's episode; episodes are read by their agent", post_episode
    ),
    f"GET {P}/episodes": Case(READS, "lists A's own episodes", get("/episodes", q="MARKER")),
    f"GET {P}/episodes/{{episode_id}}": Case(READS, "reads one of A's episodes", get("/episodes/1")),
    f"GET {P}/memory": Case(
        READS, "searches the memories A may read", get("/memory", q="MARKER", tags="MARKER")
    ),
    f"GET {MEMORY}": Case(READS, "lists memories of an agent", get(f"/agents/{A}/memory", status="all")),
    f"POST {MEMORY}": Case(
        WRITES, "A records every memory type; cross-team ones become proposals", post_memory
    ),
    f"GET {MEMORY}/{{memory_id}}": Case(READS, "reads one memory", get(f"/agents/{B}/memory/1")),
    f"PATCH {MEMORY}/{{memory_id}}": Case(
        WRITES, "A edits its own memories and its merged shared one", patch_memory
    ),
    f"POST {MEMORY}/{{memory_id}}/merge": Case(
        COORDINATOR_ONLY, "settling near-duplicates is a reviewer's act", merge_memory
    ),
    f"POST {MEMORY}/{{memory_id}}/dismiss-similar": Case(
        COORDINATOR_ONLY, "settling near-duplicates is a reviewer's act", dismiss_similar
    ),
    f"POST {P}/scribe": Case(
        WRITES, "A's own Scribe, approved, started days ago, after proposing", post_scribe
    ),
    f"POST {P}/memory/export": Case(COORDINATOR_ONLY, "the mirror is run by people", mirror_route("export")),
    f"POST {P}/memory/import": Case(
        COORDINATOR_ONLY, "adopting files is a person's act", mirror_route("import")
    ),
    f"POST {P}/sessions": Case(SESSION, "the open session is the team's", post_session),
    f"GET {P}/sessions": Case(READS, "lists sessions", get("/sessions")),
    f"GET {P}/sessions/current": Case(READS, "reads the open session", get("/sessions/current")),
    f"PATCH {P}/sessions/current": Case(SESSION, "the open session is the team's", patch_session),
    f"GET {P}/sessions/{{path:session_id}}": Case(READS, "reads one session", get("/sessions/MARKER/x")),
    # The schema and its page hold no ledger text.
    "GET /openapi.json": Case(READS, "the API's schema", get_outside_projects("/openapi.json")),
    "GET /docs": Case(READS, "the schema's page", get_outside_projects("/docs")),
    "GET /": Case(READS, "the API's root", get_outside_projects("/")),
    **{
        f"{method} /{{path:unknown}}": Case(
            READS, "any path no route matches: a JSON 404", send(method, "/MARKER/agents/x")
        )
        for method in UNKNOWN_METHODS
    },
}

# ---------------------------------------------------------------------------------------------
# The registry: every MCP tool

MCP: dict[str, Case] = {
    "whoami": Case(READS, "says who the token is", read_tool("whoami")),
    "submit_inbox_entry": Case(WRITES, "A proposes every entry type", submit_by_tool("submit_inbox_entry")),
    "squad_decide": Case(WRITES, "the same tool under Squad's name", submit_by_tool("squad_decide")),
    "list_inbox": Case(READS, "lists entries", read_tool("list_inbox", q="MARKER", status="all")),
    "merge_inbox_entry": Case(COORDINATOR_ONLY, "a merge is a person's act", merge_by_tool),
    "reject_inbox_entry": Case(COORDINATOR_ONLY, "a rejection is a person's act", reject_by_tool),
    "submit_decision": Case(COORDINATOR_ONLY, "a decision is recorded by a person", submit_decision_by_tool),
    "list_decisions": Case(READS, "lists decisions", read_tool("list_decisions", q="MARKER")),
    "search": Case(READS, "searches the ledger", read_tool("search", q="MARKER", inactive=True)),
    "get_decision": Case(READS, "reads one decision", read_tool("get_decision", decision_id=1)),
    "record_memory": Case(WRITES, "A records every memory type", record_memory_by_tool),
    "list_memory": Case(READS, "lists memories of an agent", read_tool("list_memory", agent_name=B)),
    "get_memory": Case(READS, "reads one memory", read_tool("get_memory", agent_name=B, memory_id=1)),
    "search_memory": Case(READS, "searches memories", read_tool("search_memory", q="MARKER", tags="MARKER")),
    "inject_learning": Case(COORDINATOR_ONLY, "injecting is a coordinator's act", inject_by_tool),
    "record_episode": Case(WRITES, "A records its own run's episode", record_episode_by_tool),
    "list_episodes": Case(READS, "lists A's own episodes", read_tool("list_episodes", q="MARKER")),
    "start_session": Case(SESSION, "the open session is the team's", start_session_by_tool),
    "current_session": Case(READS, "reads the open session", read_tool("current_session")),
    "update_session": Case(SESSION, "the open session is the team's", update_session_by_tool),
    "compile_context": Case(READS, "compiles A's own block", compile_by_tool),
    "export_memory": Case(COORDINATOR_ONLY, "the mirror is run by people", mirror_tool("export_memory")),
    "import_memory": Case(COORDINATOR_ONLY, "adopting files is a person's act", mirror_tool("import_memory")),
    "scribe_run": Case(WRITES, "A's own Scribe, approved, started days ago, after proposing", scribe_by_tool),
}


def test_every_rest_operation_has_a_case():
    found = rest_operations()
    assert sorted(found - REST.keys()) == [], "REST operations without a governance case"
    assert sorted(REST.keys() - found) == [], "governance cases for REST operations that are gone"


def test_every_mcp_tool_has_a_case():
    found = mcp_tools()
    assert sorted(found - MCP.keys()) == [], "MCP tools without a governance case"
    assert sorted(MCP.keys() - found) == [], "governance cases for MCP tools that are gone"


# ---------------------------------------------------------------------------------------------
# Running a case


def check_unreached_after_the_run(w: World, m: str) -> None:
    """B holds none of A's text, before and after A's Scribe closes the run (approved, started days ago),
    the way an agent's run ends."""
    assert_unreached(w, m)
    w.scribe(w.a, run_of(m))
    w.scribe(w.a, f"closing-{m.lower()}")
    assert_unreached(w, m, when=" after A's Scribe")


def check_session(w: World, m: str) -> None:
    """A's session text reaches B only under "Current Session", naming A, within the session budget;
    once the session ends, its summary reaches B naming A, and nowhere else."""
    for label, result in contexts(w, m).items():
        inside, outside = split_section(result.text or "", "Current Session")
        assert holds(inside, m), f"the open session is shared by design; B's context {label}:\n{result.text}"
        assert not holds(outside, m), f"A's session text outside B's session layer ({label}):\n{result.text}"
        assert unattributed(inside, m, A) == [], f"B's session layer ({label}) does not name A"
        assert result.session.budget is not None and result.session.tokens <= result.session.budget
    accepted(w.a.patch("/sessions/current", {"end": True}))
    for label, result in contexts(w, m).items():
        text = result.text or ""
        assert unattributed(text, m, A) == [], (
            f"A's ended session reaches B ({label}) without naming A:\n{text}"
        )
        _, outside = split_section(text, "Relevant Past Knowledge")
        assert not holds(outside, m), f"A's ended session outside B's relevant layer ({label}):\n{text}"


def run_case(case: Case, w: World, m: str) -> None:
    case.act(w, m)
    if case.kind == SESSION:
        check_session(w, m)
    else:
        check_unreached_after_the_run(w, m)


@pytest.mark.parametrize("operation", sorted(REST))
def test_rest_operation_keeps_a_text_from_b(world, marker, operation):
    run_case(REST[operation], world, marker)


@pytest.mark.parametrize("tool", sorted(MCP))
def test_mcp_tool_keeps_a_text_from_b(world, marker, tool):
    run_case(MCP[tool], world, marker)


# ---------------------------------------------------------------------------------------------
# Workspace files: every file kind a sync reads
#
# `.squad/decisions.md` as Canon first meets it is adopted as the coordinator asked for it
# (`create_project`, then `sync_ledger`: docs/mirror.md, "Nothing written into a file reaches every agent
# unreviewed"), so its blocks keep their types and are not asserted against here. A block added to the
# log later comes from whoever can write to the repository: it may become an active `technical`
# decision, which every agent reads as the team's log (docs/mirror.md), but it must not reach any
# agent's context. Files under `.squad/agents/{folder}/` belong to the agent the folder names; these
# cases write them under A's folder.


def _decisions_block(title: str, body: str, type_: str = "architectural") -> str:
    return (
        f"### 2026-01-02: {title}\n**By:** coordinator\n**Type:** {type_}\n**Status:** Accepted\n\n{body}\n"
    )


def later_decisions_block(w: World, m: str) -> None:
    first = "# Decisions\n\n" + _decisions_block("Use Postgres", "One database for everything.")
    w.write(".squad/decisions.md", first)
    w.sync()
    for type_ in ("architectural", "scope"):
        first += "\n---\n\n" + _decisions_block(f"{m} {TASK_WORDS} {type_}", hostile(m), type_)
    w.write(".squad/decisions.md", first)


def inbox_files(w: World, m: str) -> None:
    coordinator_agent = w.project.coordinator_agent
    for n, agent in enumerate((B, coordinator_agent, A)):
        for type_, tags in (("learning", "cross-team"), ("architectural", ""), ("pattern", "")):
            w.write(
                f".squad/decisions/inbox/{agent.lower()}-{type_}-{n}.md",
                f"---\nagent: {agent}\nauthor: {agent}\nslug: {m.lower()}-{type_}-{n}\ntype: {type_}\n"
                f"title: {m} {TASK_WORDS}\nimportance: high\ntags: [{tags}]\n---\n{hostile(m)}",
            )
    w.write(
        ".squad/decisions/inbox/coordinator-said.md",
        f"# Decision: {m} {TASK_WORDS}\n\n**Author:** {coordinator_agent}\n**By:** {coordinator_agent}\n\n"
        f"{hostile(m)}\n**Why:** {hostile(m)}\n",
    )


def history_file(w: World, m: str) -> None:
    w.write(
        f".squad/agents/{A.lower()}/history.md",
        f"# Project Context\n\n{hostile(m)}\n\n## Core Context\n\n- {m} core {TASK_WORDS}\n\n"
        f"## Learnings\n\n- 📌 {m} learning {TASK_WORDS} (cross-team)\n- {hostile(m)}\n\n"
        f"## Patterns\n\n- {m} pattern {TASK_WORDS}\n\n## Recent Updates\n\n- {m} update {TASK_WORDS}\n",
    )


def private_note(w: World, m: str) -> None:
    for type_ in ("core_context", "learning", "pattern"):
        w.write(
            f".squad/agents/{A.lower()}/memory/{type_}.md",
            f"---\ntype: {type_}\nimportance: high\ntags: [cross-team, db]\n---\n{hostile(m)}",
        )


def team_notes(w: World, m: str) -> None:
    for author in (B, A, w.project.coordinator_agent, ""):
        front = f"author: {author}\n" if author else ""
        w.write(
            f".squad/memory/{author.lower() or 'anonymous'}.md",
            f"---\n{front}type: learning\nimportance: high\n---\n{hostile(m)}",
        )


FILES: dict[str, Act] = {
    ".squad/decisions.md block added after the first adoption": later_decisions_block,
    ".squad/decisions/inbox/*.md naming B, the coordinator agent, A": inbox_files,
    ".squad/agents/alice/history.md": history_file,
    ".squad/agents/alice/memory/*.md": private_note,
    ".squad/memory/*.md by B, A, the coordinator agent, no one": team_notes,
}


def ledger_holds(project: Project, marker: str) -> bool:
    """Did a sync take the text in: a proposal, a memory or a decision of the project that holds it?"""
    return any(
        model.objects.filter(project=project, content__contains=marker).exists()
        for model in (InboxEntry, AgentMemory, Decision)
    )


def coordinator_agent_client(w: World) -> ApiClient | None:
    """An agent token for the project's coordinator agent, or None when issuing one is refused."""
    try:
        return w.agent_client(w.project.coordinator_agent)
    except services.LedgerError:
        return None


def scribes_as_the_agents_run_them(w: World) -> None:
    """A, B and the coordinator agent each close a run, as agents do (their own tokens, approved, started
    days ago). The run ids hold no marker: B's own episodes name B's own runs."""
    for client in (w.a, w.b, coordinator_agent_client(w)):
        if client is not None:
            w.scribe(client, "after-the-sync")


@pytest.mark.parametrize("kind", sorted(FILES))
def test_workspace_file_keeps_an_agents_text_from_b(world, marker, kind):
    FILES[kind](world, marker)
    world.sync()
    assert ledger_holds(world.project, marker), "the sync read none of the hostile text"
    # A later block of the decision log may be read as the team's log; only the context is checked for it.
    decisions = kind != ".squad/decisions.md block added after the first adoption"
    assert_unreached(world, marker, decisions=decisions)
    scribes_as_the_agents_run_them(world)
    world.sync()
    assert_unreached(world, marker, decisions=decisions, when=" after the agents' Scribe runs")


def test_now_md_reaches_b_only_as_the_session_within_its_budget(world, marker):
    # `.squad/identity/now.md` is the open session (docs/mirror.md): shared by design, with no author to
    # name; it must stay in the session layer and within its budget.
    world.write(
        ".squad/identity/now.md",
        f'---\nfocus_area: "{marker} {TASK_WORDS} {"padding " * 20000}"\n'
        f'active_issues: ["{marker} {TASK_WORDS}"]\n---\n{hostile(marker)}',
    )
    world.sync()
    scribes_as_the_agents_run_them(world)
    for label, result in contexts(world, marker).items():
        _, outside = split_section(result.text or "", "Current Session")
        assert not holds(outside, marker), f"now.md outside B's session layer ({label}):\n{result.text}"
        assert result.session.budget is not None and result.session.tokens <= result.session.budget


# ---------------------------------------------------------------------------------------------
# The Scribe and the coordinator agent


@pytest.mark.parametrize(
    "spelling",
    ["coordinator", "Coordinator", "\uff23\uff2f\uff2f\uff32\uff24\uff29\uff2e\uff21\uff34\uff2f\uff32"],
)
def test_an_agent_token_for_the_coordinator_agent_cannot_approve_its_own_boundaries(world, marker, spelling):
    try:
        _, secret = services.token_issue(project=world.project, role=TokenRole.AGENT, agent_name=spelling)
    except services.LedgerError:
        # Issuing such a token is refused: the backstop then needs a coordinator token by construction.
        return
    impostor = ApiClient(client=Client(), token=secret, project=world.project)
    for n, (type_, tags) in enumerate(PROPOSALS):
        answered(impostor.post("/decisions/inbox", proposal(marker, n, type_, tags)))
    for type_, tags in MEMORIES:
        answered(impostor.post(f"/agents/{spelling}/memory", memory_body(marker, type_, tags)))
    world.scribe(impostor, run_of(marker))
    tool_ok(world.tool(impostor, "scribe_run", run_id=run_of(marker), started_at=OLD_START, approved=True))
    assert_unreached(world, marker)


def test_the_agents_scribe_never_shares_a_cross_team_proposal(world, marker):
    entry = accepted(
        world.a.post(f"/agents/{A}/memory", memory_body(marker, "learning", "cross-team"))
    ).json()
    assert entry["status"] == "pending"
    world.scribe(world.a, run_of(marker))
    assert InboxEntry.objects.get(pk=entry["id"]).status == "pending"
    assert_unreached(world, marker)


# ---------------------------------------------------------------------------------------------
# Un-archiving: what a person took back stays back


A_CHANGES: dict[str, dict[str, object]] = {
    "status active": {"status": "active"},
    "status active with tags": {"status": "active", "tags": ["cross-team"]},
    "content": {"content": "REPLACED"},
    "content and status": {"content": "REPLACED", "status": "active"},
    "importance and status": {"importance": "high", "status": "active"},
    "tags without cross-team": {"tags": ["db"], "status": "active"},
}


@pytest.mark.parametrize("change", sorted(A_CHANGES))
def test_a_cannot_bring_back_a_shared_memory_a_coordinator_archived(world, marker, change):
    memory = shared_memory_of_a(world, hostile(marker))
    assert_reached(world, marker)
    name = AgentMemory.objects.get(pk=memory).agent.name
    accepted(world.coordinator.patch(f"/agents/{name}/memory/{memory}", {"status": "archived"}))
    assert_context_clean(world, marker)
    body = {
        key: hostile(marker) if value == "REPLACED" else value for key, value in A_CHANGES[change].items()
    }
    answered(world.a.patch(f"/agents/{A}/memory/{memory}", body))
    # The same text again, as a memory of A's own: it stays A's.
    world.a_tool("record_memory", agent_name=A, type="learning", content=hostile(marker), importance="high")
    assert_context_clean(world, marker, when=f" after A's PATCH {change}")


# ---------------------------------------------------------------------------------------------
# Sessions are bounded


HUGE = 900 * 1024


@pytest.mark.parametrize("field", ["focus_area", "summary", "active_issues"])
def test_a_900_kb_session_field_is_refused_or_cut_to_the_session_budget(world, marker, field):
    value = f"{marker} {TASK_WORDS} " + "x" * HUGE
    body = {"active_issues": [value]} if field == "active_issues" else {field: value}
    response = answered(world.a.post("/sessions", body))
    if response.status_code != 201:
        assert response.status_code in (400, 413)
        return
    for label, result in contexts(world, marker).items():
        inside, _ = split_section(result.text or "", "Current Session")
        assert result.session.budget is not None and result.session.tokens <= result.session.budget, label
        assert len(inside) < 64 * 1024, f"B's session layer ({label}) is {len(inside)} characters"


# ---------------------------------------------------------------------------------------------
# Positive controls: once a person acted, the text does reach B


def test_a_cross_team_memory_reaches_b_once_a_coordinator_merged_it(world, marker):
    entry = accepted(
        world.a.post(f"/agents/{A}/memory", memory_body(marker, "learning", "cross-team"))
    ).json()
    assert_unreached(world, marker)
    accepted(world.coordinator.post(f"/decisions/inbox/{entry['id']}/merge", CONFIRMED))
    assert_reached(world, marker)


def test_an_architectural_entry_reaches_b_once_a_coordinator_merged_it(world, marker):
    entry = accepted(world.a.post("/decisions/inbox", proposal(marker, 1, "architectural", ""))).json()
    assert_unreached(world, marker)
    accepted(world.coordinator.post(f"/decisions/inbox/{entry['id']}/merge", CONFIRMED))
    assert_reached(world, marker)


def test_a_proposal_made_by_tool_reaches_b_once_a_coordinator_merged_it_by_tool(world, marker):
    proposed = tool_ok(
        world.a_tool("record_memory", agent_name=A, **memory_body(marker, "pattern", "cross-team"))
    )
    assert proposed["kind"] == "proposal"
    entry = proposed["entry"]
    assert_unreached(world, marker)
    tool_ok(world.tool(world.coordinator, "merge_inbox_entry", entry_id=entry["id"], confirm_flagged=True))
    assert_reached(world, marker)


def test_a_team_note_reaches_b_once_a_coordinator_merged_it(world, marker):
    world.write(".squad/memory/note.md", f"---\nauthor: {A}\nimportance: high\n---\n{hostile(marker)}")
    world.sync()
    assert_unreached(world, marker)
    entry = InboxEntry.objects.get(project=world.project, status="pending")
    accepted(world.coordinator.post(f"/decisions/inbox/{entry.pk}/merge", CONFIRMED))
    assert_reached(world, marker)


def test_the_checks_see_a_marker_in_a_private_read(world, marker):
    """The reads check is not blind: B's own private memory holding the marker is found by it."""
    accepted(world.b.post(f"/agents/{B}/memory", memory_body(marker, "learning", "")))
    with pytest.raises(AssertionError):
        assert_unreached(world, marker)


def test_every_case_has_a_reason():
    for case in [*REST.values(), *MCP.values()]:
        assert case.kind in (WRITES, COORDINATOR_ONLY, READS, SESSION) and case.why
