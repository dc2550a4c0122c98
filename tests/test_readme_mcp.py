"""The README's MCP client configurations, used as written: each block is parsed, its token variable
filled in the way its client would, and then connected to a real server (uvicorn serving
`config.asgi:application` in a thread of this process, or `manage.py mcp` over stdio)."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from django.conf import settings
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from ledger import services
from ledger.models import Project
from tests import processes
from tests.mcp_calls import answer
from tests.servers import asgi_in_thread
from tests.threads import run_async

README = Path(settings.BASE_DIR, "README.md").read_text(encoding="utf-8")
README_URL = "http://127.0.0.1:8000/mcp/"
README_CHECKOUT = "/path/to/canon"

# One marked block per way of connecting: `<!-- mcp-config: NAME -->` right before the fence.
BLOCK = re.compile(r"<!-- mcp-config: ([a-z-]+) -->\n```(\w+)\n(.*?)\n```", re.DOTALL)

# How each client writes "the value of environment variable NAME" (its documented syntax).
POSIX_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
CURSOR_VARIABLE = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
HTTP_CLIENTS = {"claude-code": POSIX_VARIABLE, "copilot": POSIX_VARIABLE, "cursor": CURSOR_VARIABLE}

# The keys each client's documentation gives a server entry, and the ones it requires.
ENTRY_KEYS = {
    "claude-code": ({"type", "url", "headers"}, {"type", "url", "headers"}),
    "copilot": ({"type", "url", "headers", "tools"}, {"type", "url", "headers", "tools"}),
    "cursor": ({"url", "headers"}, {"url", "headers"}),
    "claude-code-stdio": ({"type", "command", "args", "env"}, {"command", "args", "env"}),
}


def readme_blocks() -> dict[str, tuple[str, str]]:
    found: dict[str, tuple[str, str]] = {}
    for name, language, text in BLOCK.findall(README):
        assert name not in found, f"two README blocks are marked {name!r}"
        found[name] = (language, text)
    return found


def readme_entry(name: str) -> dict[str, Any]:
    """The one server entry (`canon`) of a JSON block."""
    language, text = readme_blocks()[name]
    assert language == "json"
    config = json.loads(text)
    assert list(config) == ["mcpServers"], f"{name}: the top level is one mcpServers object"
    assert list(config["mcpServers"]) == ["canon"], f"{name}: one server, named canon"
    entry = config["mcpServers"]["canon"]
    assert isinstance(entry, dict)
    return entry


def expand(value: Any, pattern: re.Pattern[str], environ: dict[str, str]) -> Any:
    """Fill every variable reference in the strings of `value`, as the client does before connecting.
    A variable the environment lacks is a failure here, where a client would send the text as it is."""
    if isinstance(value, str):
        return pattern.sub(lambda m: environ[m[1]], value)
    if isinstance(value, list):
        return [expand(v, pattern, environ) for v in value]
    if isinstance(value, dict):
        return {k: expand(v, pattern, environ) for k, v in value.items()}
    return value


@pytest.fixture(scope="module")
def served(django_db_setup: None) -> Iterator[str]:
    """`config.asgi`'s application under uvicorn in a thread of this process, on the test database; the
    base URL it answers on."""
    with asgi_in_thread() as url:
        yield url


@pytest.fixture
def my_app(transactional_db: None) -> Project:
    """The README's project, with one decision, and another project's decision beside it."""
    project, _ = services.project_create_or_update(slug="my-app", name="My app")
    other, _ = services.project_create_or_update(slug="other-app", name="Other app")
    for target, title in ((project, "Use PostgreSQL in production"), (other, "Another team's rule")):
        services.decision_create(
            project=target, agent_name="lead", type="technical", title=title, content="As agreed.", by="lead"
        )
    services.entry_submit(
        project=other, agent_name="Alice", slug="not-yours", type="technical", content="Elsewhere."
    )
    return project


@pytest.fixture
def alice_token(my_app: Project) -> str:
    _, secret = services.token_issue(project=my_app, role="agent", agent_name="Alice")
    return secret


async def use(client: Client) -> tuple[set[str], list[str], list[tuple[str, str, str]]]:
    """What an agent does first: list the tools, read the decisions, propose an entry and find it in
    the inbox. Returns the tool names, the decision titles and the inbox as (agent, slug, status)."""
    async with client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        decisions = answer(await client.call_tool("list_decisions", {}))["items"]
        answer(
            await client.call_tool(
                "submit_inbox_entry", {"slug": "cache-reads", "type": "technical", "content": "Cache reads."}
            )
        )
        inbox = answer(await client.call_tool("list_inbox", {}))["items"]
    return tools, [d["title"] for d in decisions], [(e["agent_name"], e["slug"], e["status"]) for e in inbox]


# Each way of connecting acts as Alice of my-app: her project's decision, her entry, nothing else.
SEEN = (["Use PostgreSQL in production"], [("Alice", "cache-reads", "pending")])


def test_readme_marks_a_block_for_every_way_of_connecting() -> None:
    assert set(readme_blocks()) == {*HTTP_CLIENTS, "claude-code-cli", "claude-code-stdio"}


@pytest.mark.parametrize("name", sorted(ENTRY_KEYS))
def test_each_block_is_json_of_its_clients_documented_shape(name: str) -> None:
    entry = readme_entry(name)
    allowed, required = ENTRY_KEYS[name]
    assert required <= set(entry) <= allowed
    if "url" in entry:
        assert entry["url"] == README_URL
        assert entry.get("type", "http") == "http"
        assert list(entry["headers"]) == ["Authorization"]
    if name == "copilot":
        assert entry["tools"] == ["*"]
    if name == "claude-code-stdio":
        assert entry["type"] == "stdio"
        assert all(isinstance(a, str) for a in entry["args"])


@pytest.mark.parametrize("name", sorted(ENTRY_KEYS))
def test_each_block_takes_the_token_from_the_environment(name: str) -> None:
    entry = readme_entry(name)
    pattern = CURSOR_VARIABLE if name == "cursor" else POSIX_VARIABLE
    secrets = entry["headers"]["Authorization"] if "headers" in entry else entry["env"]["CANON_TOKEN"]
    assert pattern.findall(secrets) == ["CANON_TOKEN"]
    assert "canon_" not in json.dumps(entry)  # the prefix of every real token


def test_claude_cli_line_adds_what_the_json_describes() -> None:
    language, text = readme_blocks()["claude-code-cli"]
    assert language == "sh"
    # The shell expands $CANON_TOKEN inside the double quotes before `claude` runs.
    argv = shlex.split(text.replace("$CANON_TOKEN", "canon_secret"))
    assert argv[:3] == ["claude", "mcp", "add"]
    options, positional = argv[3:], []
    parsed: dict[str, str] = {}
    while options:
        word = options.pop(0)
        if word.startswith("--"):
            parsed[word] = options.pop(0)
        else:
            positional.append(word)
    entry = readme_entry("claude-code")
    assert parsed == {"--transport": entry["type"], "--header": "Authorization: Bearer canon_secret"}
    assert positional == ["canon", entry["url"]]


@pytest.mark.parametrize("name", sorted(HTTP_CLIENTS))
def test_http_block_connects_as_written(name: str, served: str, alice_token: str) -> None:
    entry = expand(readme_entry(name), HTTP_CLIENTS[name], {"CANON_TOKEN": alice_token})
    url = entry["url"].replace("http://127.0.0.1:8000", served)

    tools, *seen = run_async(
        use, Client(streamable_http_client(url, http_client=httpx2.AsyncClient(headers=entry["headers"])))
    )

    assert {"whoami", "list_decisions", "submit_inbox_entry", "list_inbox"} <= tools
    assert tuple(seen) == SEEN


@pytest.mark.parametrize("name", sorted(HTTP_CLIENTS))
def test_http_block_without_the_variable_set_is_refused(name: str, served: str, my_app: Project) -> None:
    """A client that finds no CANON_TOKEN sends the reference as it is; the server answers 401."""
    entry = readme_entry(name)
    url = entry["url"].replace("http://127.0.0.1:8000", served)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}

    async def post() -> httpx2.Response:
        async with httpx2.AsyncClient(headers=entry["headers"]) as http:
            return await http.post(url, json=body, headers={"Accept": "application/json, text/event-stream"})

    response = run_async(post)

    assert response.status_code == 401
    assert "bearer token" in response.json()["error"]


def stdio_parameters(token: str) -> StdioServerParameters:
    """The stdio block as the client starts it: the checkout's paths, the token from the environment,
    and Canon's settings (here: the test database) in the environment the agent runtime passes on."""
    entry = expand(readme_entry("claude-code-stdio"), POSIX_VARIABLE, {"CANON_TOKEN": token})
    entry = json.loads(json.dumps(entry).replace(README_CHECKOUT, str(settings.BASE_DIR)))
    return StdioServerParameters(
        command=entry["command"], args=entry["args"], env=processes.environment(**entry["env"])
    )


def test_stdio_block_runs_the_command_as_written(alice_token: str) -> None:
    tools, *seen = run_async(use, Client(stdio_parameters(alice_token)))

    assert {"whoami", "list_decisions", "submit_inbox_entry", "list_inbox"} <= tools
    assert tuple(seen) == SEEN


def test_stdio_block_with_another_projects_token_does_not_start(my_app: Project) -> None:
    other = Project.objects.get(slug="other-app")
    _, secret = services.token_issue(project=other, role="agent", agent_name="Mallory")
    params = stdio_parameters(secret)

    result = processes.manage(*params.args[1:], CANON_TOKEN=secret)

    assert result.returncode == 2
    assert "is not for project 'my-app'" in result.stderr


async def whole_flow(alice: Client, lead: Client) -> str:
    """Alice proposes and finds her proposal, the coordinator merges it, Alice records a memory and
    compiles her context. Returns the compiled text."""
    async with alice, lead:
        proposed = answer(
            await alice.call_tool(
                "submit_inbox_entry",
                {
                    "slug": "retry-policy",
                    "type": "architectural",
                    "title": "Retry idempotent calls three times",
                    "content": "Retry idempotent HTTP calls three times with jitter.",
                },
            )
        )
        pending = answer(await alice.call_tool("list_inbox", {}))["items"]
        assert [entry["slug"] for entry in pending] == ["retry-policy"]
        merged = answer(await lead.call_tool("merge_inbox_entry", {"entry_id": proposed["id"]}))
        assert merged["status"] == "merged"
        answer(
            await alice.call_tool(
                "record_memory",
                {
                    "agent_name": "Alice",
                    "type": "learning",
                    "importance": "high",
                    "content": "The staging queue drains at 02:00.",
                },
            )
        )
        block = answer(await alice.call_tool("compile_context", {"agent": "Alice"}))
    return block["text"]


def check_compiled(text: str) -> None:
    assert "Retry idempotent calls three times" in text  # the decision the coordinator merged
    assert "The staging queue drains at 02:00." in text  # the memory Alice recorded


def http_client(name: str, served: str, secret: str) -> Client:
    entry = expand(readme_entry(name), HTTP_CLIENTS[name], {"CANON_TOKEN": secret})
    url = entry["url"].replace("http://127.0.0.1:8000", served)
    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(headers=entry["headers"])))


def test_over_http_as_configured_agents_propose_list_merge_record_and_compile(
    served: str, alice_token: str, my_app: Project
) -> None:
    _, lead_token = services.token_issue(project=my_app, role="coordinator")
    text = run_async(
        whole_flow, http_client("claude-code", served, alice_token), http_client("cursor", served, lead_token)
    )
    check_compiled(text)


def test_over_stdio_as_configured_agents_propose_list_merge_record_and_compile(
    alice_token: str, my_app: Project
) -> None:
    _, lead_token = services.token_issue(project=my_app, role="coordinator")
    text = run_async(whole_flow, Client(stdio_parameters(alice_token)), Client(stdio_parameters(lead_token)))
    check_compiled(text)
