"""The memory page's lifecycle (docs/dashboard.md): expired marked, superseded linked, near-duplicates
merged or dismissed, memories pinned."""

from __future__ import annotations

from datetime import timedelta

from django.urls import reverse
from django.utils import timezone

from ledger import services
from ledger.models import AgentMemory

RETRY = "Retry the billing webhook three times with exponential backoff before paging the on-call engineer"
RETRY_AGAIN = "Retry the billing webhook three times with exponential backoff before paging on-call"
HTMX = {"HTTP_HX_REQUEST": "true"}


def remember(project, content=RETRY, agent="Ripley", **kw):
    kw.setdefault("type", "learning")
    return services.memory_record(project=project, agent_name=agent, content=content, **kw)


def flagged_pair(project):
    return remember(project), remember(project, content=RETRY_AGAIN)


def url(name, memory, slug="alpha"):
    return reverse(f"review:{name}", args=[slug, memory.pk])


def listed(client, **params):
    return [m.pk for m in client.get("/p/alpha/memory/", params).context["page"].object_list]


def test_expired_memories_are_shown_marked_and_can_be_hidden(lead, project):
    memory = remember(project, content="Ash is a synthetic — Ash's orders come from Mother")
    AgentMemory.objects.filter(pk=memory.pk).update(expires_at=timezone.now() - timedelta(days=2))
    html = lead.get("/p/alpha/memory/").content.decode()
    assert f'id="memory-{memory.pk}"' in html and '<span class="tag">expired</span>' in html
    assert listed(lead, expired="false") == []
    assert listed(lead, expired="true") == [memory.pk]


def test_superseded_memories_are_listed_when_asked_and_linked(lead, project):
    old = remember(project, content="The staging database is db-2")
    new = services.memory_store(
        project=project, agent_name="Ripley", type="learning", content="It is db-3", corrects=old.pk
    ).memory
    assert listed(lead) == [new.pk]
    assert listed(lead, superseded="true", archived="false") == [old.pk]
    html = lead.get("/p/alpha/memory/", {"superseded": "true"}).content.decode()
    assert f'Superseded by <a href="/p/alpha/memory/?memory={new.pk}">memory {new.pk}</a>' in html
    assert listed(lead, memory=str(old.pk)) == [old.pk]


def test_the_near_duplicates_filter_lists_flagged_memories_with_their_buttons(lead, project):
    earlier, later = flagged_pair(project)
    assert listed(lead, similar="true") == [later.pk]
    html = lead.get("/p/alpha/memory/", {"similar": "true"}).content.decode()
    assert f'of <a href="/p/alpha/memory/?memory={earlier.pk}">memory {earlier.pk}</a>' in html
    assert f'name="keep" value="{earlier.pk}"' in html and "Not a duplicate" in html


def test_merge_without_javascript_redirects_back_and_says_what_happened(lead, project):
    earlier, later = flagged_pair(project)
    response = lead.post(
        url("memory_merge", later), {"keep": earlier.pk, "next": "/p/alpha/memory/?similar=true"}, follow=True
    )
    assert response.redirect_chain[-1][0] == "/p/alpha/memory/?similar=true"
    assert (
        f"Merged: memory {earlier.pk} kept, memory {later.pk} superseded by it." in response.content.decode()
    )
    later.refresh_from_db()
    assert (later.status, later.superseded_by_id) == ("superseded", earlier.pk)


def test_merge_keeping_the_flagged_over_htmx_answers_its_row(lead, project):
    earlier, later = flagged_pair(project)
    response = lead.post(url("memory_merge", later), {"keep": later.pk}, **HTMX)
    html = response.content.decode()
    assert html.lstrip().startswith(f'<tr id="memory-{later.pk}"') and "<html" not in html
    earlier.refresh_from_db()
    assert (earlier.status, earlier.superseded_by_id) == ("superseded", later.pk)


def test_a_refused_merge_says_why_in_the_row(lead, project):
    plain = remember(project)
    response = lead.post(url("memory_merge", plain), {"keep": plain.pk}, **HTMX)
    assert f"memory {plain.pk} is not flagged as a near-duplicate" in response.content.decode()
    plain.refresh_from_db()
    assert plain.status == "active"


def test_dismiss_clears_the_flag(lead, project):
    _, later = flagged_pair(project)
    response = lead.post(url("memory_dismiss", later), **HTMX)
    assert "no longer flagged" in response.content.decode()
    later.refresh_from_db()
    assert later.similar_to_id is None and later.similarity is None


def test_pin_and_unpin_from_the_page(lead, project):
    memory = remember(project)
    html = lead.post(url("memory_pin", memory), {"pinned": "true"}, **HTMX).content.decode()
    assert f"Memory {memory.pk} pinned: it never expires." in html and 'value="false">Unpin' in html
    memory.refresh_from_db()
    assert memory.pinned and memory.expires_at is None
    lead.post(url("memory_pin", memory), {"pinned": "false"}, **HTMX)
    memory.refresh_from_db()
    assert not memory.pinned and memory.expires_at > timezone.now() + timedelta(days=179)


def test_pin_without_a_choice_is_refused(lead, project):
    memory = remember(project)
    html = lead.post(url("memory_pin", memory), {}, **HTMX).content.decode()
    assert "pinned: choose to pin or to unpin" in html
    memory.refresh_from_db()
    assert not memory.pinned


def test_a_viewer_may_not_pin_merge_or_dismiss(viewer, project):
    _, later = flagged_pair(project)
    assert viewer.post(url("memory_pin", later), {"pinned": "true"}).status_code == 403
    assert viewer.post(url("memory_merge", later), {"keep": later.pk}).status_code == 403
    assert viewer.post(url("memory_dismiss", later)).status_code == 403
    later.refresh_from_db()
    assert later.similar_to_id is not None and not later.pinned


def test_another_projects_memory_is_404(outsider, project, other_project):
    _, later = flagged_pair(project)
    for name, data in (("memory_pin", {"pinned": "true"}), ("memory_merge", {"keep": later.pk})):
        assert outsider.post(url(name, later, slug="beta"), data).status_code == 404
    assert outsider.post(url("memory_dismiss", later, slug="beta")).status_code == 404


def test_the_actions_take_only_post(lead, project):
    memory = remember(project)
    for name in ("memory_pin", "memory_merge", "memory_dismiss"):
        assert lead.get(url(name, memory)).status_code == 405


def test_the_list_fragment_for_htmx_and_the_page_otherwise(lead, project):
    flagged_pair(project)
    fragment = lead.get("/p/alpha/memory/", {"similar": "true"}, **HTMX).content.decode()
    assert fragment.lstrip().startswith('<div id="memory-list">') and "<html" not in fragment
    assert "<html" in lead.get("/p/alpha/memory/", {"similar": "true"}).content.decode()
