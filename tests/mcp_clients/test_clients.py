"""Canon's MCP server driven by the clients people use (docs/mcp.md): the MCP Inspector's CLI and the
official TypeScript SDK's client, each over stdio (`manage.py mcp` started by the client) and over
Streamable HTTP (`/mcp/` of the ASGI application, served by uvicorn in a thread of this process).

Each test runs one flow, as an agent runtime and a coordinator would: initialize, list the tools, an agent
proposes an inbox entry and lists it, the coordinator merges it, the agent records a memory, compiles its
context and searches; and the refusals a client meets, checked by their text: an agent calling a
coordinator tool, an argument of the wrong type, an argument the tool does not take, a tool that does not
exist, and over HTTP a request without a token or with a revoked one (401). Last, what the protocol lets a
server tell its clients about its tools (`protocol_gaps`): a title and behaviour hints for each tool, an
output schema the SDK checks every answer against, the server's version, a `whoami` tool, and listable
prompts and resources when they are advertised.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.utils import timezone

from ledger import services
from ledger.models import AgentMemory, ApiToken, Decision, InboxEntry, Project
from tests.mcp_clients.clients import PINS, SDK, Printed, inspector, sdk_plan
from tests.processes import MANAGE, environment
from tests.servers import asgi_in_thread

# The clients see the same answers on either engine (the server's own tests run on both): CI runs them
# once, in the SQLite suite.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.one_engine]

STDIO = [sys.executable, MANAGE, "mcp", "--project", "alpha"]
PROPOSAL = {
    "slug": "use-postgres",
    "type": "technical",
    "title": "PostgreSQL holds the ledger in production",
    "content": "Production runs on PostgreSQL; development and the tests may use SQLite.",
    "tags": ["storage"],
}
MEMORY = "The export to the workspace retries twice before it reports a failure."
# The tools docs/mcp.md lists, besides `whoami` (protocol_gaps checks that one) and `squad_decide` (another
# name for `submit_inbox_entry`, for Squad's agents).
DOCUMENTED = {
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
    "inject_learning",
    "record_episode",
    "list_episodes",
    "start_session",
    "current_session",
    "update_session",
    "search",
    "compile_context",
    "scribe_run",
    "export_memory",
    "import_memory",
}
# Tools that change nothing (the protocol's readOnlyHint and idempotentHint), besides every list_* and get_*.
# `compile_context` is not one: given a `run_id`, it records what the agent was told.
READS = {"search", "search_memory", "current_session", "whoami"}
# Tools that may end, close, supersede or replace what is there (destructiveHint).
DESTRUCTIVE = {
    "merge_inbox_entry",
    "reject_inbox_entry",
    "submit_decision",
    "import_memory",
    "update_session",
    "start_session",
}
BEARER_REFUSED = "missing or invalid bearer token"
# Inspector runs at once: each is a Node process or two, and over stdio a Django process too.
INSPECTORS_AT_ONCE = 4


@dataclass(frozen=True)
class Ref:
    """An argument taken from an earlier step's structured answer: `Ref("proposed", "id")`."""

    step: str
    key: str


@dataclass(frozen=True)
class Step:
    """One request of the flow. `wave`: the steps of one wave need nothing from each other, so the
    Inspector, one process per request, runs them side by side; the SDK's client runs them in order."""

    wave: int
    id: str
    session: str
    op: str
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass
class Outcome:
    """One step as a client saw it: `ok` when the client got an answer (a tool error is one), its JSON;
    else the client's error text. `validated`: the SDK checked the structured answer against the tool's
    output schema (None for the Inspector, which does not tell)."""

    ok: bool
    result: Any = None
    error: str = ""
    validated: bool | None = None


def flow(wrong_type: Any) -> list[Step]:
    """The steps every client runs; `wrong_type` is a `limit` of the wrong type as that client sends it."""
    alice, lead, call = "alice", "lead", "tools/call"
    memory = {"agent_name": "Alice", "type": "core_context", "content": MEMORY}
    return [
        Step(0, "tools", alice, "tools/list"),
        Step(0, "prompts", alice, "prompts/list"),
        Step(0, "resources", alice, "resources/list"),
        Step(0, "alice_whoami", alice, call, "whoami"),
        Step(0, "lead_whoami", lead, call, "whoami"),
        Step(0, "proposed", alice, call, "submit_inbox_entry", PROPOSAL),
        Step(0, "remembered", alice, call, "record_memory", memory),
        Step(0, "wrong_type", alice, call, "list_inbox", {"limit": wrong_type}),
        Step(0, "unknown_argument", alice, call, "list_inbox", {"state": "pending"}),
        Step(0, "unknown_tool", alice, call, "no_such_tool"),
        Step(1, "listed", alice, call, "list_inbox"),
        Step(1, "agent_merges", alice, call, "merge_inbox_entry", {"entry_id": Ref("proposed", "id")}),
        Step(1, "context", alice, call, "compile_context", {"agent": "Alice"}),
        Step(
            2,
            "merged",
            lead,
            call,
            "merge_inbox_entry",
            {"entry_id": Ref("proposed", "id"), "version": Ref("proposed", "version")},
        ),
        Step(3, "found", alice, call, "search", {"q": "PostgreSQL production"}),
    ]


@dataclass
class Tokens:
    alice: str
    lead: str
    revoked: str


@pytest.fixture
def tokens(project: Project) -> Tokens:
    alice = services.token_issue(project=project, role="agent", agent_name="Alice")[1]
    lead = services.token_issue(project=project, role="coordinator")[1]
    gone, revoked = services.token_issue(project=project, role="agent", agent_name="Alice")
    ApiToken.objects.filter(pk=gone.pk).update(revoked_at=timezone.now())
    return Tokens(alice=alice, lead=lead, revoked=revoked)


@pytest.fixture(scope="module")
def mcp_url() -> Iterator[str]:
    """`config.asgi`'s application under uvicorn, for this module's tests."""
    with asgi_in_thread() as url:
        yield f"{url}/mcp/"


# The flow's checks ----------------------------------------------------------------------------------


def text_of(result: dict[str, Any]) -> str:
    return " ".join(block.get("text", "") for block in result.get("content", []))


def answered(outcomes: dict[str, Outcome], step: str, *, text_is_json: bool = True) -> Any:
    """A tool's structured answer, which its text repeats (`text_is_json`); fails with the client's or the
    tool's error text otherwise."""
    outcome = outcomes[step]
    assert outcome.ok, f"{step}: {outcome.error}"
    assert not outcome.result.get("isError"), f"{step}: {text_of(outcome.result)}"
    structured = outcome.result["structuredContent"]
    if text_is_json:
        assert json.loads(text_of(outcome.result)) == structured, f"{step}: the text is not the answer"
    return structured


def refused(outcomes: dict[str, Outcome], step: str) -> str:
    """A tool error's text; fails when the step did not end in a tool error."""
    outcome = outcomes[step]
    assert outcome.ok, f"{step}: {outcome.error}"
    assert outcome.result.get("isError") is True, f"{step} was not refused: {outcome.result}"
    return text_of(outcome.result)


def check_flow(outcomes: dict[str, Outcome]) -> None:
    """What the flow's answers and the database must hold, whatever the client and the transport."""
    listing = outcomes["tools"]
    assert listing.ok, listing.error
    tools = {tool["name"]: tool for tool in listing.result["tools"]}
    assert not DOCUMENTED - set(tools), f"not listed: {sorted(DOCUMENTED - set(tools))}"
    assert all(tool["inputSchema"]["type"] == "object" for tool in tools.values())

    proposed = answered(outcomes, "proposed")
    assert (proposed["slug"], proposed["status"], proposed["agent_name"]) == (
        "use-postgres",
        "pending",
        "Alice",
    )
    listed = answered(outcomes, "listed")
    assert (listed["total"], [item["id"] for item in listed["items"]]) == (1, [proposed["id"]])

    assert (
        refused(outcomes, "agent_merges")
        == "Error executing tool merge_inbox_entry: this route needs a coordinator token"
    )
    assert refused(outcomes, "wrong_type") == (
        "Error executing tool list_inbox: invalid arguments: limit: Input should be a valid integer"
    )
    takes = ", ".join(tools["list_inbox"]["inputSchema"]["properties"])
    assert refused(outcomes, "unknown_argument") == (
        f"Error executing tool list_inbox: unknown argument(s): state; this tool takes: {takes}"
    )
    assert refused(outcomes, "unknown_tool") == "Unknown tool: no_such_tool"

    merged = answered(outcomes, "merged")
    assert (merged["id"], merged["status"]) == (proposed["id"], "merged")
    assert MEMORY in json.dumps(answered(outcomes, "remembered"))
    # The block's text may be the block itself, for the model to read, rather than its JSON.
    assert MEMORY in answered(outcomes, "context", text_is_json=False)["text"]
    hits = answered(outcomes, "found")["hits"]
    assert {"kind": "decision", "id": merged["decision_id"]} in [
        {"kind": h["kind"], "id": h["id"]} for h in hits
    ]

    entry = InboxEntry.objects.get()
    assert (entry.pk, entry.status, entry.decision_id) == (proposed["id"], "merged", merged["decision_id"])
    assert Decision.objects.get().title == PROPOSAL["title"]
    assert list(AgentMemory.objects.values_list("agent__name", "content")) == [("Alice", MEMORY)]


# What the protocol lets a server tell its clients ------------------------------------------------------


def named(value: Any, name: str, key: str) -> bool:
    """`value` is `name`, or an object whose `key` is `name`."""
    return value == name or (isinstance(value, dict) and value.get(key) == name)


def protocol_gaps(outcomes: dict[str, Outcome], handshake: dict[str, Any] | None = None) -> list[str]:
    """Every way the listing and the answers fall short of what a client reads from them, one line each.
    `handshake`: the initialize answer's serverInfo (`server`) and `capabilities`, where the client shows
    them; without it, a list of prompts or resources the server answered must not be empty."""
    tools = {tool["name"]: tool for tool in outcomes["tools"].result["tools"]}
    reads = {name for name in tools if name.startswith(("list_", "get_")) or name in READS}
    hints = {name: tool.get("annotations") or {} for name, tool in tools.items()}

    def lacking(test: Callable[[str], bool], among: set[str]) -> list[str]:
        return sorted(name for name in among if not test(name))

    gaps = {
        "tools without a title": lacking(lambda n: bool(tools[n].get("title")), set(tools)),
        "tools without annotations": lacking(lambda n: bool(tools[n].get("annotations")), set(tools)),
        "reads without readOnlyHint true": lacking(lambda n: hints[n].get("readOnlyHint") is True, reads),
        "reads without idempotentHint true": lacking(lambda n: hints[n].get("idempotentHint") is True, reads),
        "writes marked readOnlyHint": lacking(
            lambda n: hints[n].get("readOnlyHint") is not True, set(tools) - reads
        ),
        "tools without destructiveHint true": lacking(
            lambda n: hints[n].get("destructiveHint") is True, DESTRUCTIVE & set(tools)
        ),
        "tools whose outputSchema has no properties": lacking(
            lambda n: bool((tools[n].get("outputSchema") or {}).get("properties")), set(tools)
        ),
    }
    lines = [f"{what}: {', '.join(names)}" for what, names in gaps.items() if names]
    if handshake is not None and not handshake["server"].get("version"):
        lines.append(f"serverInfo has no version: {handshake['server']}")
    if "whoami" not in tools:
        lines.append("no whoami tool")
    for step, agent, role in (("alice_whoami", "Alice", "agent"), ("lead_whoami", None, "coordinator")):
        outcome = outcomes[step]
        me = (outcome.result or {}).get("structuredContent") if outcome.ok else None
        if not (
            isinstance(me, dict)
            and named(me.get("project"), "alpha", "slug")
            and me.get("role") == role
            and "agent" in me
            and (agent is None or named(me["agent"], agent, "name"))
        ):
            lines.append(f"whoami for the {role} token answered {outcome.result or outcome.error}")
    for kind in ("prompts", "resources"):
        outcome = outcomes[kind]
        advertised = outcome.ok if handshake is None else kind in handshake["capabilities"]
        if advertised and not (outcome.ok and outcome.result.get(kind)):
            lines.append(f"{kind} are advertised but none is listed: {outcome.result or outcome.error}")
    return lines


# The TypeScript SDK's client ---------------------------------------------------------------------------


def sdk_steps(steps: list[Step]) -> list[dict[str, Any]]:
    def argument(value: Any) -> Any:
        return (
            {"$ref": f"{value.step}.result.structuredContent.{value.key}"}
            if isinstance(value, Ref)
            else value
        )

    return [
        {
            "id": step.id,
            "session": step.session,
            "op": step.op,
            **({"name": step.tool} if step.tool else {}),
            "arguments": {key: argument(value) for key, value in step.arguments.items()},
        }
        for step in steps
    ]


def run_sdk(sessions: dict[str, Any], steps: list[Step]) -> tuple[dict[str, Any], dict[str, Outcome]]:
    answer = sdk_plan(sessions, sdk_steps(steps), env=dict(os.environ))
    assert answer["versions"]["sdk"] == PINS[SDK]
    outcomes = {
        name: Outcome(
            ok=step["ok"],
            result=step.get("result"),
            error=step["error"]["message"] if not step["ok"] else "",
            validated=step.get("validated"),
        )
        for name, step in answer["steps"].items()
    }
    return answer, outcomes


def check_sdk_answers(answer: dict[str, Any], outcomes: dict[str, Outcome]) -> None:
    """The handshake as the SDK read it, and the SDK's own check of every structured answer."""
    for name in ("alice", "lead"):
        session = answer["sessions"][name]
        assert session["ok"], session["error"]
        assert session["server"]["name"] == "canon"
        assert "tools" in session["capabilities"]
        assert "decision ledger" in session["instructions"]
    unchecked = [
        name
        for name, outcome in outcomes.items()
        if outcome.ok and "structuredContent" in (outcome.result or {}) and outcome.validated is not True
    ]
    assert not unchecked, f"answers the SDK did not check against an outputSchema: {unchecked}"


def stdio_session(secret: str) -> dict[str, Any]:
    return {"stdio": {"command": STDIO[0], "args": STDIO[1:], "env": environment(CANON_TOKEN=secret)}}


def http_session(url: str, secret: str | None) -> dict[str, Any]:
    return {"http": {"url": url, "token": secret}}


def test_the_sdk_client_runs_the_flow_over_stdio(tokens: Tokens) -> None:
    sessions = {"alice": stdio_session(tokens.alice), "lead": stdio_session(tokens.lead)}
    answer, outcomes = run_sdk(sessions, flow(wrong_type="5"))
    check_sdk_answers(answer, outcomes)
    check_flow(outcomes)
    gaps = protocol_gaps(outcomes, answer["sessions"]["alice"])
    assert not gaps, "\n".join(gaps)


def test_the_sdk_client_runs_the_flow_over_http(tokens: Tokens, mcp_url: str) -> None:
    sessions = {
        "alice": http_session(mcp_url, tokens.alice),
        "lead": http_session(mcp_url, tokens.lead),
        "anonymous": http_session(mcp_url, None),
        "revoked": http_session(mcp_url, tokens.revoked),
    }
    answer, outcomes = run_sdk(sessions, flow(wrong_type="5"))
    for name in ("anonymous", "revoked"):
        session = answer["sessions"][name]
        assert not session["ok"], f"{name} connected"
        assert session["error"]["code"] == 401, session["error"]
        assert BEARER_REFUSED in session["error"]["message"]
    check_sdk_answers(answer, outcomes)
    check_flow(outcomes)
    gaps = protocol_gaps(outcomes, answer["sessions"]["alice"])
    assert not gaps, "\n".join(gaps)


# The MCP Inspector's CLI -------------------------------------------------------------------------------


def run_inspector(steps: list[Step], runs: Callable[..., Printed]) -> dict[str, Outcome]:
    """One `mcp-inspector --cli` per step, a wave's side by side; `runs(session, method, **options)`
    runs one."""
    outcomes: dict[str, Outcome] = {}

    def one(step: Step) -> Outcome:
        arguments = {
            key: outcomes[value.step].result["structuredContent"][value.key]
            if isinstance(value, Ref)
            else value
            for key, value in step.arguments.items()
        }
        options = {"tool": step.tool, "arguments": arguments} if step.op == "tools/call" else {}
        printed = runs(step.session, step.op, **options)
        if printed.code == 0 and printed.answer is not None:
            return Outcome(ok=True, result=printed.answer)
        return Outcome(ok=False, error=f"exit {printed.code}: {printed.stderr.strip()}")

    with ThreadPoolExecutor(max_workers=INSPECTORS_AT_ONCE) as pool:
        for wave in sorted({step.wave for step in steps}):
            now = [step for step in steps if step.wave == wave]
            outcomes.update(zip((step.id for step in now), pool.map(one, now), strict=True))
    return outcomes


def typed(arguments: dict[str, Any]) -> dict[str, str]:
    """Arguments as `--tool-arg key=value` takes them: each value written as JSON, which it reads back."""
    return {key: json.dumps(value) for key, value in arguments.items()}


def test_the_inspector_cli_runs_the_flow_over_stdio(tokens: Tokens) -> None:
    secrets = {"alice": tokens.alice, "lead": tokens.lead}

    def runs(
        session: str, method: str, tool: str | None = None, arguments: dict[str, Any] | None = None
    ) -> Printed:
        return inspector(
            STDIO,
            method,
            env=environment(),
            server_env={"CANON_TOKEN": secrets[session]},
            tool=tool,
            arguments=typed(arguments or {}),
        )

    outcomes = run_inspector(flow(wrong_type=True), runs)
    check_flow(outcomes)
    gaps = protocol_gaps(outcomes)
    assert not gaps, "\n".join(gaps)


def test_the_inspector_cli_runs_the_flow_over_http(tokens: Tokens, mcp_url: str) -> None:
    secrets = {"alice": tokens.alice, "lead": tokens.lead}

    def runs(
        session: str, method: str, tool: str | None = None, arguments: dict[str, Any] | None = None
    ) -> Printed:
        return inspector(
            [mcp_url],
            method,
            env=dict(os.environ),
            headers={"Authorization": f"Bearer {secrets[session]}"},
            tool=tool,
            arguments=typed(arguments or {}),
        )

    for headers in ({}, {"Authorization": f"Bearer {tokens.revoked}"}):
        printed = inspector([mcp_url], "tools/list", env=dict(os.environ), headers=headers)
        assert printed.code == 1 and printed.answer is None
        assert "Failed to connect to MCP server" in printed.stderr and BEARER_REFUSED in printed.stderr
    outcomes = run_inspector(flow(wrong_type=True), runs)
    check_flow(outcomes)
    gaps = protocol_gaps(outcomes)
    assert not gaps, "\n".join(gaps)
