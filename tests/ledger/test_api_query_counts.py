"""Every list of the API reads a page in a fixed number of queries, however many rows it holds."""

from __future__ import annotations

import pytest

from ledger import services

# The token (with its project and agent), the total, the page; for decisions also the replaced ids and
# the revisions (the agent and the source entry are joined); for a text search also the newest matches,
# read once for the total and the page (`ledger.search`).
LISTS = [
    ("/decisions/inbox", {"status": "all"}, 3),
    ("/decisions", {"agent": "alice"}, 5),
    ("/memory", {"tags": "ops,db", "q": "note"}, 4),
    ("/agents/alice/memory", {"type": "learning"}, 3),
    ("/sessions", {}, 3),
]


def _fill(project, size):
    previous = None
    for i in range(size):
        entry = services.entry_submit(
            project=project, agent_name="alice", slug=f"e-{i}", type="scope", content=f"Entry {i}."
        ).entry
        decision = services.decision_create(
            project=project,
            agent_name="alice",
            type="process",
            title=f"Rule {i}",
            content=f"Rule {i}.",
            tags="ops",
            supersedes=[previous.pk] if previous is not None and i % 2 else [],
            by="lead",
        )
        services.decision_edit(
            project=project, decision_id=decision.pk, by="lead", content=f"Rule {i}, edited."
        )
        previous = decision
        if i % 3 == 0:
            services.entry_merge(project=project, entry_id=entry.pk, by="lead")
        services.memory_record(
            project=project, agent_name="alice", type="learning", content=f"A note {i}.", tags="ops"
        )
        services.session_start(project=project, session_id=f"s-{i}")


@pytest.mark.parametrize("size", [3, 30])
@pytest.mark.parametrize(("path", "params", "queries"), LISTS)
def test_a_list_reads_a_page_in_a_fixed_number_of_queries(
    project, make_api, django_assert_num_queries, path, params, queries, size
):
    _fill(project, size)
    for client in (make_api("agent", "alice"), make_api("coordinator")):
        client.get(path, **params)  # a token's first use records when it was last used
        with django_assert_num_queries(queries):
            response = client.get(path, **params)
        assert response.status_code == 200
        assert len(response.json()) == int(response["X-Total-Count"]) >= size // 2
