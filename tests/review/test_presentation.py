"""What the dashboard says: times, empty states, filter errors and the messages after an action."""

from __future__ import annotations

from datetime import timedelta

from django.urls import reverse
from django.utils import timezone

from ledger import services
from ledger.models import DecisionRevision
from review.templatetags.review_tags import ago


def test_ago_says_just_now_within_the_first_minute():
    assert ">just now</time>" in ago(timezone.now() - timedelta(seconds=20))


def test_ago_says_minutes_and_keeps_the_exact_time_on_hover():
    moment = timezone.now() - timedelta(minutes=5, seconds=3)
    html = ago(moment)
    assert "5\xa0minutes ago</time>" in html
    assert f'title="{timezone.localtime(moment):%Y-%m-%d %H:%M:%S}' in html
    assert f'datetime="{timezone.localtime(moment).isoformat()}"' in html


def test_decisions_page_of_an_empty_project_says_where_decisions_come_from(lead, project):
    html = lead.get("/p/alpha/decisions/").content.decode()
    assert "No active decision yet" in html
    assert "or record one below" in html


def test_decisions_page_with_filters_that_match_nothing_offers_to_clear_them(lead, project, decision):
    html = lead.get("/p/alpha/decisions/", {"q": "nothing like this"}).content.decode()
    assert "No decisions match these filters" in html
    assert 'href="/p/alpha/decisions/?status=all"' in html


def test_a_bad_filter_value_is_named_by_its_label(lead, project):
    html = lead.get("/p/alpha/decisions/", {"since": "yesterday"}).content.decode()
    assert "From: Enter a valid date." in html


def test_inbox_names_a_bad_filter_value(lead, project):
    html = lead.get("/p/alpha/inbox/", {"age": "century"}).content.decode()
    assert "Age: Select a valid choice." in html


def test_memory_page_of_an_empty_project_says_how_memories_arrive(lead, project):
    html = lead.get("/p/alpha/memory/").content.decode()
    assert "No memory yet" in html and "/api/projects/alpha/agents/NAME/memory" in html


def test_memory_archived_filter_offers_only_no_and_yes(lead, project):
    html = lead.get("/p/alpha/memory/").content.decode()
    assert "Unknown" not in html
    assert '<option value="false" selected>No</option>' in html


def test_memory_page_per_agent_is_headed_with_the_agents_name(lead, project):
    services.memory_record(project=project, agent_name="Alice", type="learning", content="a")
    html = lead.get("/p/alpha/memory/", {"agent": "alice"}).content.decode()
    assert "<h1>Memory of Alice</h1>" in html


def test_archiving_a_memory_without_javascript_says_archived(lead, project):
    memory = services.memory_record(project=project, agent_name="Alice", type="learning", content="a")
    response = lead.post(
        reverse("review:memory_archive", args=["alpha", memory.pk]),
        {"next": "/p/alpha/memory/?agent=alice"},
        follow=True,
    )
    assert response.redirect_chain[-1][0] == "/p/alpha/memory/?agent=alice"
    assert f"Memory {memory.pk} archived." in response.content.decode()


def test_saving_a_memory_unchanged_says_nothing_changed(lead, project):
    memory = services.memory_record(
        project=project, agent_name="Alice", type="learning", content="a", importance="high"
    )
    response = lead.post(
        reverse("review:memory_edit", args=["alpha", memory.pk]),
        {"importance": "high", "tags": ""},
        HTTP_HX_REQUEST="true",
    )
    assert b"Nothing to save: unchanged." in response.content


def test_saving_a_decision_unchanged_keeps_no_revision_and_says_so(lead, project, decision):
    response = lead.post(
        reverse("review:decision_edit", args=["alpha", decision.pk]),
        {"title": decision.title, "content": decision.content, "rationale": decision.rationale},
        follow=True,
    )
    assert b"Nothing to save: the text is unchanged." in response.content
    assert not DecisionRevision.objects.exists()


def test_mirror_page_without_a_workspace_offers_no_buttons_and_says_how_to_set_one(lead, project):
    html = lead.get("/p/alpha/mirror/").content.decode()
    assert "Import the team" not in html and "Export the ledger" not in html
    assert "manage.py create_project alpha --workspace DIR" in html


def test_mirror_page_with_a_workspace_offers_import_and_export(lead, project, tmp_path):
    project.workspace = str(tmp_path)
    project.save()
    html = lead.get("/p/alpha/mirror/").content.decode()
    assert "Import the team" in html and "Export the ledger" in html


def test_project_page_links_recent_actions_to_what_they_touched(lead, project, entry):
    services.entry_merge(project=project, entry_id=entry.pk, by="lead")
    html = lead.get("/p/alpha/").content.decode()
    assert f'merged <a href="/p/alpha/inbox/{entry.pk}/">“Use PostgreSQL”</a>' in html
    assert 'aria-current="page">Alpha</a>' in html
