"""Every layer of the context block has a budget: from the request, the project, the settings
(docs/compiler.md, "Budgets")."""

from __future__ import annotations

import logging

import pytest
from django.urls import reverse

from ledger import context, services
from ledger.models import Project
from ledger.tokens import count_tokens

TASK = "Rotate the Stripe webhook signing secret"


def remember(project, agent, content, **fields):
    fields.setdefault("type", "learning")
    return services.memory_record(project=project, agent_name=agent, content=content, **fields)


def with_budgets(project, budgets):
    Project.objects.filter(pk=project.pk).update(context_budgets=budgets)
    project.refresh_from_db()
    return project


# --- Where each budget comes from ---


def test_budgets_default_to_the_settings(project, settings):
    settings.CANON_CONTEXT_MAX_ITEMS = 7
    settings.CANON_CONTEXT_MAX_TOKENS = 300
    settings.CANON_CONTEXT_RELEVANT_TOKENS = 200
    settings.CANON_CONTEXT_SESSION_TOKENS = 100
    assert context.budgets_for(project) == context.Budgets(max_items=7, memory=300, relevant=200, session=100)


def test_a_projects_budgets_come_before_the_settings(project):
    with_budgets(project, {"relevant": 1500, "session": 400, "max_items": 5})
    budgets = context.budgets_for(project)
    assert (budgets.max_items, budgets.memory, budgets.relevant, budgets.session) == (5, 4000, 1500, 400)


def test_the_request_comes_before_the_project(project):
    with_budgets(project, {"max_items": 5, "memory": 100, "relevant": 1500, "session": 400})
    budgets = context.budgets_for(project, max_items=9, max_tokens=0, relevant_tokens=12, session_tokens=34)
    assert budgets == context.Budgets(max_items=9, memory=0, relevant=12, session=34)


def test_the_compile_reports_each_layers_budget(project):
    with_budgets(project, {"relevant": 1500})
    layers = context.compile(project, "Ripley", session_tokens=250).layers()
    assert {name: layer["budget"] for name, layer in layers.items()} == {
        "boundaries": None,
        "memory": 4000,
        "relevant": 1500,
        "session": 250,
    }


def test_a_projects_memory_budget_is_spent(project):
    small = remember(project, "Ripley", "Short note.", type="core_context")
    remember(project, "Ripley", "A much longer note about the deploy pipeline. " * 20, type="core_context")
    with_budgets(project, {"memory": small.tokens})
    assert context.compile(project, "Ripley").memory.ids == [small.pk]


@pytest.mark.parametrize(
    "budgets",
    [
        {"relevant": -1},
        {"relevant": "lots"},
        {"relevant": 2.5},
        {"relevant": True},
        {"relevant": 100_001},
        {"relavant": 10},
        ["relevant", 10],
        "relevant=10",
    ],
)
def test_an_invalid_project_budget_is_ignored_and_logged(project, caplog, budgets):
    with_budgets(project, budgets)
    with caplog.at_level(logging.WARNING, logger="canon.context"):
        result = context.compile(project, "Ripley", task=TASK)
    assert result.error is None
    assert result.relevant.budget == 2000  # the setting
    assert "context_budgets ignored" in caplog.text


def test_a_valid_key_beside_an_invalid_one_still_counts(project):
    with_budgets(project, {"session": 300, "relevant": -5})
    budgets = context.budgets_for(project)
    assert (budgets.session, budgets.relevant) == (300, 2000)


@pytest.mark.parametrize(
    ("budgets", "problem"),
    [
        ({"relevant": -1}, "relevant must be between 0 and 100000"),
        ({"max_items": 201}, "max_items must be between 0 and 200"),
        ({"session": "800"}, "session must be a whole number"),
        ({"memory": False}, "memory must be a whole number"),
        ({"focus": 3}, "'focus' is not a budget"),
        ([1, 2], "must be an object"),
    ],
)
def test_budget_problems_name_what_is_wrong(budgets, problem):
    problems = context.budget_problems(budgets)
    assert len(problems) == 1 and problem in problems[0]


def test_a_valid_budget_has_no_problem():
    assert context.budget_problems({"max_items": 0, "memory": 100_000, "relevant": 1, "session": 800}) == []
    assert context.budget_problems({}) == []


# --- The admin refuses an invalid project budget ---


@pytest.fixture
def staff_client(client, django_user_model):
    user = django_user_model.objects.create_superuser("root", "root@example.com", "pw-123456")
    client.force_login(user)
    return client


def admin_form(project, budgets):
    return {
        "slug": project.slug,
        "name": project.name,
        "workspace": "",
        "coordinator_agent": "coordinator",
        "squad_type": "technical",
        "context_budgets": budgets,
        "memberships-TOTAL_FORMS": "0",
        "memberships-INITIAL_FORMS": "0",
        "memberships-MIN_NUM_FORMS": "0",
        "memberships-MAX_NUM_FORMS": "1000",
    }


@pytest.mark.parametrize(
    ("budgets", "message"),
    [
        ('{"relevant": -1}', "relevant must be between 0 and 100000"),
        ('{"session": 2.5}', "session must be a whole number"),
        ('{"focus": 10}', "&#x27;focus&#x27; is not a budget"),
    ],
)
def test_the_admin_refuses_an_invalid_budget_with_a_clear_message(staff_client, project, budgets, message):
    url = reverse("admin:ledger_project_change", args=[project.pk])
    response = staff_client.post(url, admin_form(project, budgets))
    assert response.status_code == 200  # the form again, with the error
    assert message in response.content.decode()
    project.refresh_from_db()
    assert project.context_budgets == {}


def test_the_admin_saves_a_valid_budget(staff_client, project):
    url = reverse("admin:ledger_project_change", args=[project.pk])
    response = staff_client.post(url, admin_form(project, '{"relevant": 1500, "session": 800}'))
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.context_budgets == {"relevant": 1500, "session": 800}


# --- The session is cut to its budget; the boundaries never are ---


def long_session(project, lines=40):
    services.session_start(project=project, session_id="sprint-12", focus_area="Webhook security")
    for i in range(lines):
        services.session_update_current(
            project=project, summary_append=f"Run r{i} by Ripley completed: rotated key {i} for Łódź ☃."
        )


def test_a_session_within_its_budget_is_whole(project):
    long_session(project, lines=3)
    result = context.compile(project, "Ripley")
    assert result.session.cut == 0
    assert "Run r0 by Ripley" in result.text and "Run r2 by Ripley" in result.text


def test_the_session_is_cut_to_its_budget_oldest_summary_lines_first(project):
    long_session(project)
    result = context.compile(project, "Ripley", session_tokens=120)
    text = result.text
    assert 0 < result.session.tokens <= 120
    assert result.session.cut > 0
    assert "**Focus:** Webhook security" in text  # the focus is kept
    assert "Run r39 by Ripley" in text  # the newest line is kept
    assert "Run r0 by Ripley" not in text  # the oldest is left out
    assert f"**Summary:** ({result.session.cut} earlier lines left out)" in text
    body = text.split("## Current Session\n", 1)[1].rstrip("\n")
    assert count_tokens(body) == result.session.tokens
    # As few lines as possible were left out: one more line would not have fitted.
    kept = [line for line in body.split("\n") if "Run r" in line]
    assert len(kept) == 40 - result.session.cut


def test_a_session_budget_too_small_for_any_summary_line_keeps_the_focus(project):
    long_session(project, lines=5)
    result = context.compile(project, "Ripley", session_tokens=20)
    assert "**Focus:** Webhook security" in result.text
    assert result.session.cut == 5 and "Run r" not in result.text
    assert "**Summary:** (5 earlier lines left out)" in result.text
    assert result.session.tokens <= 20


def test_a_session_budget_too_small_for_the_focus_leaves_the_session_out(project):
    """Cut like every other layer: no session text over its budget, the focus included."""
    long_session(project, lines=5)
    result = context.compile(project, "Ripley", session_tokens=1)
    assert result.text is None
    assert result.session.ids == [] and result.session.tokens == 0 and result.session.cut == 5


def test_a_zero_session_budget_leaves_the_session_out(project):
    long_session(project, lines=2)
    result = context.compile(project, "Ripley", session_tokens=0)
    assert result.text is None and result.session.ids == []


def test_a_cut_session_costs_no_extra_query(project, django_assert_num_queries):
    long_session(project)
    with django_assert_num_queries(3):
        context.compile(project, "Ripley", session_tokens=120)


def test_boundaries_are_never_cut_and_their_size_is_reported(project):
    for i in range(30):
        services.decision_create(
            project=project,
            agent_name="lead",
            type="architectural",
            title=f"Boundary {i}: never call Stripe from a request thread",
            content="Queue it. " * 30,
            by="lead",
        )
    result = context.compile(project, "Ripley", max_tokens=10, relevant_tokens=10, session_tokens=10)
    assert len(result.boundaries.ids) == 30
    assert result.boundaries.tokens > 1000
    assert result.layers()["boundaries"] == {
        "tokens": result.boundaries.tokens,
        "ids": result.boundaries.ids,
        "budget": None,
    }
