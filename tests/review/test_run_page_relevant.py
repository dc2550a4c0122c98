"""The run page ("what an agent was told"): the task, each layer against its budget, and the relevant
memories and episodes (docs/dashboard.md)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from ledger import context, services
from ledger.models import Compilation, Source

TASK = "Retry the Stripe webhook when the signature check times out"


@pytest.fixture
def told(project):
    """A compile of Ripley's run with a task, a relevant memory, a session summary and an episode."""
    services.memory_record(
        project=project, agent_name="Ripley", type="core_context", content="Ripley owns payments."
    )
    services.memory_record(
        project=project,
        agent_name="Ripley",
        type="learning",
        content="Stripe webhook retries back off <slowly>.",
    )
    services.memory_record(
        project=project,
        agent_name="Dallas",
        type="learning",
        content="Sprint 8 closed: the Stripe webhook signature check moved to the edge.",
        source=Source.SESSION_SUMMARY,
    )
    services.episode_record(
        project=project,
        agent_name="Ripley",
        run_id="run-41/attempt 2",
        outcome="failed",
        tried="Retried the Stripe webhook inside the request.",
        difficulties="The signature check timed out.",
    )
    services.session_start(project=project, session_id="sprint-9", focus_area="Payments")
    result = context.compile(project, "Ripley", task=TASK, run_id="run-42", relevant_tokens=1500)
    return Compilation.objects.get(pk=result.compilation_id)


def page(client, compilation):
    return client.get(reverse("review:compilation", args=["alpha", compilation.pk]))


def test_the_run_page_shows_the_task_and_each_layer_against_its_budget(lead, told):
    response = page(lead, told)
    html = response.content.decode()
    assert response.status_code == 200
    assert f"<strong>Task:</strong> {TASK}" in html
    layers = {row["name"]: row for row in response.context["layers"]}
    assert list(layers) == ["Boundaries", "Memory", "Relevant past knowledge", "Current session"]
    assert layers["Relevant past knowledge"]["budget"] == 1500
    assert layers["Relevant past knowledge"]["tokens"] == told.layers["relevant"]["tokens"] > 0
    assert layers["Boundaries"]["unbudgeted"] and "never cut" in html
    tokens = told.layers["relevant"]["tokens"]
    assert f"<td>Relevant past knowledge</td><td>{tokens}</td><td>1500</td>" in html


def test_the_run_page_lists_relevant_memories_and_episodes_by_name(lead, told):
    response = page(lead, told)
    html = response.content.decode()
    relevant = response.context["relevant"]
    assert sorted(m.content[:6] for m in relevant) == ["Sprint", "Stripe"]
    assert [m.pk for m in relevant] == told.layers["relevant"]["ids"]  # in block order
    # The memory layer keeps only its own rows.
    assert [m.content for m in response.context["memories"]] == ["Ripley owns payments."]
    assert "Stripe webhook retries back off &lt;slowly&gt;." in html  # escaped, never markup
    assert "(session summary)" in html and ">Dallas</a>" in html
    assert "episode of run" in html and "run-41/attempt 2</a> (failed)" in html
    assert "?agent=Ripley&amp;run=run-41/attempt%202" in html


def test_a_compile_without_a_task_shows_no_task_and_no_relevant_list(lead, project):
    compiled = context.compile(project, "Ripley", run_id="run-1")
    html = page(lead, Compilation.objects.get(pk=compiled.compilation_id)).content.decode()
    assert "Task:" not in html and "Relevant past knowledge</h2>" not in html


def test_an_older_record_without_budgets_still_opens(lead, told):
    Compilation.objects.filter(pk=told.pk).update(
        layers={"boundaries": {"tokens": 0, "ids": []}, "memory": {"tokens": 3, "ids": []}},
        budgets={},
        task="",
    )
    response = page(lead, told)
    assert response.status_code == 200
    assert [row["budget"] for row in response.context["layers"]] == [None, None]


def test_another_projects_run_page_is_404(outsider, told):
    assert outsider.get(reverse("review:compilation", args=["alpha", told.pk])).status_code == 404


def test_a_viewer_may_read_the_run_page(viewer, told):
    assert page(viewer, told).status_code == 200


def test_the_run_page_is_get_only(lead, told):
    assert lead.post(reverse("review:compilation", args=["alpha", told.pk])).status_code == 405


def test_the_run_page_makes_a_fixed_number_of_queries(lead, told, django_assert_num_queries):
    page(lead, told)  # warm the session
    # The sign-in (session, user), the access check, the compilation and its decisions, memories and
    # episodes: the same for any number of rows.
    with django_assert_num_queries(9):
        page(lead, told)
