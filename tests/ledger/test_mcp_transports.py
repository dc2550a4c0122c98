"""The MCP tools over their two transports, through the SDK's client (docs/mcp.md): stdio through
`manage.py mcp` in its own process, and streamable HTTP at `/mcp/` through the production ASGI
application served by uvicorn in a thread of this process. Both on this test's database."""

from __future__ import annotations

import json
import select
import subprocess
import sys
from collections.abc import Iterator
from contextlib import AsyncExitStack
from typing import Any

import httpx2
import pytest
from django.utils import timezone
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

from ledger import services
from ledger.models import AgentMemory, ApiToken, InboxEntry, Project
from ledger.services.fields import CONTENT_MAX_LENGTH, entry_fields
from tests.mcp_calls import answer, recorded, text
from tests.processes import MANAGE, environment, manage
from tests.servers import asgi_in_thread
from tests.threads import run_async

pytestmark = pytest.mark.django_db(transaction=True)


def token(project: Project, role: str = "agent", agent: str = "Alice") -> str:
    return services.token_issue(project=project, role=role, agent_name=agent if role == "agent" else None)[1]


def run_calls(server: Any, calls: list[tuple[str, dict[str, Any]]]) -> list[CallToolResult]:
    """Open one client session on `server` and make `calls` in order."""

    async def run() -> list[CallToolResult]:
        async with AsyncExitStack() as stack:
            client = await stack.enter_async_context(Client(server))
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    return run_async(run)


# stdio ----------------------------------------------------------------------------------------------


def stdio(secret: str, project: str = "alpha") -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[MANAGE, "mcp", "--project", project],
        env=environment(CANON_TOKEN=secret),
    )


def test_stdio_agent_proposes_and_coordinator_merges(project):
    alice, lead = token(project), token(project, "coordinator")
    proposed, listed, memory, block = run_calls(
        stdio(alice),
        [
            ("submit_inbox_entry", {"slug": "use-postgres", "type": "technical", "content": "pg"}),
            ("list_inbox", {}),
            ("record_memory", {"agent_name": "Alice", "type": "core_context", "content": "retry twice"}),
            ("compile_context", {"agent": "Alice"}),
        ],
    )
    entry = answer(proposed)
    assert answer(listed)["total"] == 1
    assert recorded(memory)["source"] == "agent"
    assert "retry twice" in answer(block)["text"] == text(block)
    (merged,) = run_calls(stdio(lead), [("merge_inbox_entry", {"entry_id": entry["id"]})])
    assert answer(merged)["decision_id"] is not None
    assert InboxEntry.objects.get().status == "merged"


def test_stdio_agent_acting_as_another_agent_is_a_tool_error(project):
    (result,) = run_calls(
        stdio(token(project)),
        [("record_memory", {"agent_name": "Bob", "type": "learning", "content": "x"})],
    )
    assert result.is_error and "acts as 'Alice'" in text(result)


@pytest.mark.parametrize(
    ("secret", "needle"),
    [("", "holds no token"), ("canon_wrong", "not a valid Canon token")],
)
def test_stdio_refuses_a_missing_or_wrong_token_with_exit_code_2(project, secret, needle):
    done = manage("mcp", "--project", "alpha", CANON_TOKEN=secret)
    assert done.returncode == 2
    assert needle in done.stderr


def test_stdio_refuses_another_projects_token_with_exit_code_2(project, other_project):
    done = manage("mcp", "--project", "alpha", CANON_TOKEN=token(other_project))
    assert done.returncode == 2
    assert "not for project 'alpha'" in done.stderr


# The biggest text a caller may send over stdio, where no body limit stands before the tools.
HUGE = "x" * (5 * 1024 * 1024)


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("submit_inbox_entry", {"slug": "huge", "type": "technical", "content": HUGE}),
        ("record_memory", {"agent_name": "Alice", "type": "learning", "content": HUGE}),
    ],
)
def test_stdio_refuses_a_5_mb_content_as_the_api_does_and_stores_nothing(project, tool, arguments):
    with pytest.raises(services.Invalid) as expected:
        entry_fields(type="technical", content=HUGE)
    (result,) = run_calls(stdio(token(project)), [(tool, arguments)])
    assert result.is_error
    assert text(result) == f"Error executing tool {tool}: {expected.value.message}"
    assert not InboxEntry.objects.exists()
    assert not AgentMemory.objects.exists()


def stdio_process(secret: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, MANAGE, "mcp", "--project", "alpha"],
        env=environment(CANON_TOKEN=secret),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
    )


def exchange(process: subprocess.Popen[str], line: str, timeout: float = 30) -> dict[str, Any]:
    """Send one raw JSON-RPC line and read the answer to it (the next line), or fail after `timeout`."""
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(line + "\n")
    process.stdin.flush()
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    assert ready, f"no answer within {timeout} s to {line[:80]}"
    return json.loads(process.stdout.readline())


def tool_call(id: int, name: str, arguments: str) -> str:
    """A tools/call line with `arguments` written as raw JSON, escapes and all."""
    return (
        f'{{"jsonrpc": "2.0", "id": {id}, "method": "tools/call", '
        f'"params": {{"name": "{name}", "arguments": {arguments}}}}}'
    )


def test_stdio_refuses_a_lone_surrogate_naming_the_argument_and_keeps_answering(project):
    process = stdio_process(token(project))
    try:
        assert "result" in exchange(process, json.dumps(INITIALIZE))
        assert process.stdin is not None
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        refused = exchange(
            process,
            tool_call(2, "submit_inbox_entry", '{"slug": "x", "type": "scope", "content": "a\\ud800b"}'),
        )
        listed = exchange(process, tool_call(3, "list_inbox", "{}"))
    finally:
        process.kill()
        process.wait()
    assert refused["id"] == 2 and refused["result"]["isError"] is True
    assert refused["result"]["content"][0]["text"].startswith(
        "Error executing tool submit_inbox_entry: content: must not contain an unpaired UTF-16 surrogate"
    )
    assert listed["id"] == 3 and listed["result"]["structuredContent"]["total"] == 0
    assert not InboxEntry.objects.exists()


# Streamable HTTP ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """`config.asgi`'s application under uvicorn, for this module's tests."""
    with asgi_in_thread() as url:
        yield f"{url}/mcp/"


def http(url: str, secret: str) -> Any:
    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {secret}"}, timeout=30)
    return streamable_http_client(url, http_client=client)


def test_http_agent_proposes_and_coordinator_merges(project, base_url):
    alice, lead = token(project), token(project, "coordinator")
    proposed, memory, block = run_calls(
        http(base_url, alice),
        [
            ("submit_inbox_entry", {"slug": "use-postgres", "type": "technical", "content": "pg"}),
            ("record_memory", {"agent_name": "Alice", "type": "core_context", "content": "retry twice"}),
            ("compile_context", {"agent": "Alice"}),
        ],
    )
    entry = answer(proposed)
    assert recorded(memory)["agent_name"] == "Alice"
    assert "retry twice" in answer(block)["text"] == text(block)
    merged, listed = run_calls(
        http(base_url, lead),
        [("merge_inbox_entry", {"entry_id": entry["id"]}), ("list_decisions", {})],
    )
    assert answer(merged)["status"] == "merged"
    assert answer(listed)["items"][0]["source_entry_id"] == entry["id"]


def test_http_serves_the_prompt_and_the_resource_for_the_requests_token(project, base_url):
    services.decision_create(
        project=project,
        agent_name="lead",
        type="architectural",
        title="Use Postgres",
        content="pg",
        by="lead",
    )

    secret = token(project)

    async def run() -> tuple[Any, Any, str]:
        async with Client(http(base_url, secret)) as client:
            read = await client.read_resource("canon://context")
            prompted = await client.get_prompt("start_of_turn", {"task": "which database"})
            return read, prompted, (await client.list_resources()).resources[0].uri

    read, prompted, uri = run_async(run)
    assert str(uri) == "canon://context"
    assert "Use Postgres" in read.contents[0].text
    assert "Use Postgres" in prompted.messages[0].content.text


def test_http_agent_acting_as_another_agent_is_a_tool_error(project, base_url):
    (result,) = run_calls(
        http(base_url, token(project)),
        [("submit_inbox_entry", {"slug": "x", "type": "scope", "content": "x", "agent_name": "Bob"})],
    )
    assert result.is_error and "acts as 'Alice'" in text(result)
    assert not InboxEntry.objects.exists()


def test_http_another_projects_token_sees_nothing_here(project, other_project, base_url):
    run_calls(
        http(base_url, token(project)),
        [("submit_inbox_entry", {"slug": "x", "type": "scope", "content": "x"})],
    )
    (listed,) = run_calls(http(base_url, token(other_project, "coordinator")), [("list_inbox", {})])
    assert answer(listed)["total"] == 0


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def post(url: str, headers: dict[str, str]) -> httpx2.Response:
    return httpx2.post(
        url,
        content=json.dumps(INITIALIZE),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
        timeout=30,
    )


def test_http_without_a_token_is_401(project, base_url):
    response = post(base_url, {})
    assert response.status_code == 401
    assert "bearer token" in response.json()["error"]


def test_http_with_a_wrong_token_is_401(project, base_url):
    assert post(base_url, {"Authorization": "Bearer canon_wrong"}).status_code == 401


def test_http_with_a_revoked_token_is_401(project, base_url):
    secret = token(project)
    assert post(base_url, {"Authorization": f"Bearer {secret}"}).status_code == 200
    ApiToken.objects.update(revoked_at=timezone.now())
    assert post(base_url, {"Authorization": f"Bearer {secret}"}).status_code == 401


def test_http_host_not_allowed_is_400(project, base_url):
    response = post(base_url, {"Authorization": f"Bearer {token(project)}", "Host": "evil.example"})
    assert response.status_code == 400


def test_http_refuses_an_over_long_content_as_the_api_does_and_stores_nothing(project, base_url, alice):
    body = {"slug": "long", "type": "technical", "content": "x" * (CONTENT_MAX_LENGTH + 1)}
    response = alice.post("/decisions/inbox", body)
    (result,) = run_calls(http(base_url, token(project)), [("submit_inbox_entry", body)])
    assert response.status_code == 400
    assert text(result) == f"Error executing tool submit_inbox_entry: {response.json()['error']}"
    assert not InboxEntry.objects.exists()


def test_http_body_over_the_api_limit_is_refused_and_stores_nothing(project, base_url):
    """The API's 1 MiB limit, not the transport's default of 4: a 2 MiB proposal is refused whole."""
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {
            "name": "submit_inbox_entry",
            "arguments": {"slug": "huge", "type": "technical", "content": "x" * (2 * 1024 * 1024)},
        },
    }
    response = httpx2.post(
        base_url,
        content=json.dumps(call),
        headers={
            "Authorization": f"Bearer {token(project)}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
        timeout=30,
    )
    assert response.status_code == 413
    assert not InboxEntry.objects.exists()
