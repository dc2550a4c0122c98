"""`q` over the API and the MCP tools: relevance order, odd input, and never another agent's private rows."""

from __future__ import annotations

import pytest

from ledger import services
from tests.mcp_calls import answer, call, caller_for


def remember(project, agent, content, **kw):
    kw.setdefault("type", "learning")
    return services.memory_record(project=project, agent_name=agent, content=content, **kw)


def contents(response):
    assert response.status_code == 200, response.content
    return [m["content"] for m in response.json()]


def test_api_memory_search_finds_separate_words_best_first(project, coordinator):
    remember(project, "Alice", "the payment provider sends the webhook twice; dedupe each webhook payment")
    remember(project, "Alice", "payment pages and a webhook")
    remember(project, "Alice", "payment pages only")
    remember(project, "Alice", "invoices are sent monthly")
    response = coordinator.get("/memory", q="webhook payment")
    assert contents(response) == [
        "the payment provider sends the webhook twice; dedupe each webhook payment",
        "payment pages and a webhook",
        "payment pages only",
    ]
    assert response["X-Total-Count"] == "3"


def test_api_search_never_shows_another_agents_private_memory(project, alice, bob):
    remember(project, "Bob", "secret rotation plan")
    remember(project, "Bob", "secret sharing rules", tags="cross-team")
    remember(project, "Alice", "my secret notes")
    assert sorted(contents(alice.get("/memory", q="secret"))) == ["my secret notes", "secret sharing rules"]
    assert sorted(contents(alice.get("/memory", q="secret rotation"))) == [
        "my secret notes",
        "secret sharing rules",
    ]
    assert contents(alice.get("/memory", q="rotation", agent="bob")) == []
    assert sorted(contents(bob.get("/memory", q="secret"))) == [
        "secret rotation plan",
        "secret sharing rules",
    ]


def test_api_inbox_search_keeps_private_entries_private(project, alice, coordinator):
    services.entry_submit(
        project=project,
        agent_name="Bob",
        slug="bob-learning",
        type="learning",
        content="private deploy trick",
    )
    services.entry_submit(
        project=project, agent_name="Bob", slug="bob-scope", type="scope", content="shared deploy scope"
    )
    assert [e["slug"] for e in alice.get("/decisions/inbox", q="deploy").json()] == ["bob-scope"]
    assert sorted(e["slug"] for e in coordinator.get("/decisions/inbox", q="deploy").json()) == [
        "bob-learning",
        "bob-scope",
    ]


def test_api_decision_search_ranks_a_title_first(project, alice):
    for title, content in [("Jobs", "one job warms the cache"), ("Cache policy", "an hour")]:
        services.decision_create(
            project=project, agent_name="lead", type="process", title=title, content=content, by="l"
        )
    assert [d["title"] for d in alice.get("/decisions", q="cache").json()] == ["Cache policy", "Jobs"]


def test_api_search_combines_with_the_other_filters(project, coordinator):
    remember(project, "Alice", "deploy on tuesdays", tags="ops")
    remember(project, "Alice", "deploy on fridays", tags="ui")
    remember(project, "Bob", "deploy on mondays", tags="ops")
    assert contents(coordinator.get("/memory", q="deploy", tags="ops", agent="alice")) == [
        "deploy on tuesdays"
    ]


@pytest.mark.parametrize(
    "q",
    ['"', "NEAR(a b", "a OR b", "-x", "content:x", "(((", "AND NOT", "*", "x' OR 1=1 --", "\\", "é" * 300],
)
@pytest.mark.parametrize("path", ["/memory", "/decisions/inbox", "/decisions"])
def test_api_query_syntax_is_an_answer_never_a_500(project, coordinator, q, path):
    remember(project, "Alice", "a memory")
    assert coordinator.get(path, q=q).status_code == 200


@pytest.mark.django_db(transaction=True)
def test_mcp_search_memory_never_finds_another_agents_private_memory(project):
    alice, bob = caller_for(project, "agent", "Alice"), caller_for(project, "agent", "Bob")
    remember(project, "Bob", "rotate the signing keys monthly")
    remember(project, "Bob", "signing keys live in the vault", tags="cross-team")
    found = answer(call(alice, "search_memory", q="signing keys"))
    assert [m["content"] for m in found["items"]] == ["signing keys live in the vault"]
    assert found["total"] == 1
    found = answer(call(alice, "search_memory", q="rotate signing", agent="Bob"))
    assert [m["content"] for m in found["items"]] == ["signing keys live in the vault"]
    assert answer(call(bob, "search_memory", q="signing keys"))["total"] == 2


@pytest.mark.django_db(transaction=True)
def test_mcp_search_is_by_relevance_and_takes_any_text(project):
    alice = caller_for(project, "agent", "Alice")
    remember(project, "Alice", "cache once, then nothing more at all here")
    remember(project, "Alice", "cache, cache and cache again")
    assert [m["content"] for m in answer(call(alice, "search_memory", q="cache"))["items"]] == [
        "cache, cache and cache again",
        "cache once, then nothing more at all here",
    ]
    for q in ['"', "NEAR(", "a OR b", "AND NOT", "(*)"]:
        assert answer(call(alice, "search_memory", q=q))["total"] == 0
