"""A decision's page reads its history in a fixed number of queries: the supersession chain in one,
however long and branching, and a cycle in the links ends the walk."""

from __future__ import annotations

import pytest
from django.urls import reverse

from ledger import context, selectors, services
from ledger.models import Decision


def make(project, title, **kw):
    kw.setdefault("type", "architectural")
    return services.decision_create(
        project=project, agent_name="lead", title=title, content=f"{title}.", by="l", **kw
    )


def history(project, size):
    """A decision `size` links deep both ways, with a branch, `size` revisions, runs told it and audit
    events, and `size` other active decisions to choose from."""
    oldest = make(project, "Rule 0")
    chain = [oldest]
    for i in range(1, 2 * size + 1):
        extra = [make(project, f"Branch {i}").pk] if i % 2 else []
        chain.append(make(project, f"Rule {i}", supersedes=[chain[-1].pk, *extra]))
    middle = chain[size]
    for i in range(size):
        services.decision_edit(project=project, decision_id=middle.pk, by="carol", content=f"Take {i}.")
        make(project, f"Other {i}", type="process")
    for i in range(size):
        context.compile(project, f"agent-{i % 3}", run_id=f"run-{i}")
    return chain


# session, user, project, membership, the decision, the chain, the source entry, the runs told it, the
# navigation's counts, the revisions, the audit trail; an active decision adds the supersede choices.
@pytest.mark.parametrize("size", [3, 30])
@pytest.mark.parametrize(("which", "queries"), [("middle", 11), ("newest", 12)])
def test_the_decision_page_makes_a_fixed_number_of_queries(
    lead, project, django_assert_num_queries, size, which, queries
):
    chain = history(project, size)
    shown = chain[size] if which == "middle" else chain[-1]
    url = reverse("review:decision", args=["alpha", shown.pk])
    lead.get(url)
    with django_assert_num_queries(queries):
        response = lead.get(url)
    assert response.status_code == 200
    position = chain.index(shown)
    assert [d.pk for d in response.context["successors"]] == [d.pk for d in chain[position + 1 :]]
    # the earlier rules, and the branch each odd-numbered rule also replaced
    assert len(response.context["replaced"]) == position + (position + 1) // 2


@pytest.mark.parametrize("size", [1, 40])
def test_the_chain_is_read_in_one_query_both_ways(project, django_assert_num_queries, size):
    chain = history(project, size)
    middle = Decision.objects.get(pk=chain[size].pk)
    with django_assert_num_queries(1):
        replaced, successors = selectors.decision_chain(middle)
        names = [d.agent.name for d in [*replaced, *successors]]
    assert names == ["lead"] * len(names)
    assert successors == chain[size + 1 :]
    earlier = {d.pk for d in chain[:size]} | set(
        Decision.objects.filter(
            title__startswith="Branch", superseded_by__in=chain[1 : size + 1]
        ).values_list("pk", flat=True)
    )
    assert {d.pk for d in replaced} == earlier
    assert replaced == sorted(replaced, key=lambda d: (d.created_at, d.pk))


def test_a_decision_outside_any_chain_has_none(project, django_assert_num_queries):
    alone = make(project, "Alone")
    with django_assert_num_queries(1):
        assert selectors.decision_chain(alone) == ([], [])


def test_a_cycle_in_the_links_ends_the_walk(project):
    """The services never make one; rows written another way could, and the page must still answer."""
    a, b, c = make(project, "A"), make(project, "B"), make(project, "C")
    Decision.objects.filter(pk=a.pk).update(status="superseded", superseded_by=b)
    Decision.objects.filter(pk=b.pk).update(status="superseded", superseded_by=c)
    Decision.objects.filter(pk=c.pk).update(status="superseded", superseded_by=a)
    for decision in Decision.objects.all():
        replaced, successors = selectors.decision_chain(decision)
        # Each other decision once: both reach this one, so both are listed among the replaced.
        assert sorted(d.pk for d in replaced) == sorted({a.pk, b.pk, c.pk} - {decision.pk})
        assert successors == []


def test_a_chain_of_another_project_is_not_followed(project, other_project):
    mine = make(project, "Mine")
    theirs = make(other_project, "Theirs", supersedes=[])
    Decision.objects.filter(pk=theirs.pk).update(status="superseded", superseded_by=mine)
    assert selectors.decision_chain(mine) == ([], [])
