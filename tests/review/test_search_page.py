"""The project's one search box and its results page (docs/dashboard.md, "Search")."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from ledger import services
from ledger.models import AgentMemory, Source

SEARCH = "/p/alpha/search/"


@pytest.fixture
def rows(project):
    """A team's ledger with the words `deploy` and `docs` in every kind of row."""
    decision = services.decision_create(
        project=project,
        agent_name="Juno",
        type="process",
        title="Deploy the docs site with `deploy-web-pages.sh`",
        content="**What:** never by hand.\n**Why:** the script purges the CDN.",
        by="lead",
    )
    memory = services.memory_record(
        project=project,
        agent_name="Zoë",
        type="learning",
        content="**Docs deploys fail on Mondays:**\nThe CDN token rotates at 00:00 UTC; wait for the <rotation>.",
    )
    services.session_start(project=project, session_id="s-41", summary="Rolled back the docs deploy.")
    services.session_start(project=project, session_id="s-42", summary="Docs deploy is green again.")
    summary = AgentMemory.objects.get(source=Source.SESSION_SUMMARY)
    episode = services.episode_record(
        project=project, agent_name="Zoë", run_id="run-9", outcome="failed", tried="Deploy the docs site."
    ).episode
    entry = services.entry_submit(
        project=project,
        agent_name="Marlow",
        slug="marlow-docs-preview",
        type="process",
        title="Preview each docs deploy",
        content="A preview site per change.",
    ).entry
    return {"decision": decision, "memory": memory, "summary": summary, "episode": episode, "entry": entry}


def hit_ids(response):
    return re.findall(r'id="hit-(\w+)-(\d+)"', response.content.decode())


def test_every_project_page_carries_the_search_box(lead, project, rows):
    for name in ("project", "inbox", "decisions", "memory", "sessions", "compilations", "mirror", "audit"):
        page = lead.get(reverse(f"review:{name}", args=["alpha"])).content.decode()
        assert f'<form class="search-box" method="get" action="{SEARCH}" role="search"' in page, name
        assert 'for="search-q"' in page and 'id="search-q" name="q"' in page, name


def test_the_home_page_has_no_project_search_box(lead, project):
    assert 'class="search-box"' not in lead.get("/").content.decode()


def test_the_results_mix_every_kind_best_first_each_linked_to_its_page(lead, rows):
    response = lead.get(SEARCH, {"q": "docs deploy"})
    assert response.status_code == 200
    assert set(hit_ids(response)) == {
        ("decision", str(rows["decision"].pk)),
        ("memory", str(rows["memory"].pk)),
        ("summary", str(rows["summary"].pk)),
        ("summary", "0"),
        ("episode", str(rows["episode"].pk)),
        ("entry", str(rows["entry"].pk)),
    }
    scores = [item["hit"].score for item in response.context["hits"]]
    assert scores == sorted(scores, reverse=True)
    html = response.content.decode()
    assert f'href="/p/alpha/decisions/{rows["decision"].pk}/"' in html
    assert f'href="/p/alpha/memory/?memory={rows["memory"].pk}"' in html
    assert f'href="/p/alpha/memory/?memory={rows["summary"].pk}"' in html
    assert 'href="/p/alpha/sessions/"' in html
    assert f'href="/p/alpha/inbox/{rows["entry"].pk}/"' in html
    assert 'href="/p/alpha/compilations/?agent=Zo%C3%AB&amp;run=run-9"' in html


def test_matched_words_are_marked_and_the_text_escaped(lead, rows):
    html = lead.get(SEARCH, {"q": "rotation"}).content.decode()
    assert "wait for the &lt;<mark>rotation</mark>&gt;." in html
    assert "<rotation>" not in html
    assert "matched rotation in content" in html


def test_the_box_keeps_what_was_searched(lead, rows):
    html = lead.get(SEARCH, {"q": 'docs "deploy"'}).content.decode()
    assert 'id="search-q" name="q" value="docs &quot;deploy&quot;"' in html


def test_one_kind_of_row_is_chosen_by_a_link(lead, rows):
    response = lead.get(SEARCH, {"q": "docs deploy", "kind": "decision"})
    assert hit_ids(response) == [("decision", str(rows["decision"].pk))]
    assert 'aria-current="page" hx-get="/p/alpha/search/?q=docs+deploy&amp;kind=decision"' in (
        response.content.decode()
    )


def test_rows_no_longer_in_force_are_shown_when_asked_and_marked(lead, project, rows):
    services.memory_archive(project=project, memory_id=rows["memory"].pk, by="lead")
    assert ("memory", str(rows["memory"].pk)) not in hit_ids(lead.get(SEARCH, {"q": "rotation"}))
    response = lead.get(SEARCH, {"q": "rotation", "inactive": "1"})
    assert hit_ids(response) == [("memory", str(rows["memory"].pk))]
    assert '<span class="status-badge status-archived">archived</span>' in response.content.decode()


def test_without_words_the_page_says_what_to_do(lead, rows):
    response = lead.get(SEARCH)
    assert response.status_code == 200
    assert "Type what you are looking for in the search box" in response.content.decode()
    assert hit_ids(response) == []


def test_a_query_of_common_words_says_so(lead, rows):
    html = lead.get(SEARCH, {"q": "which of the"}).content.decode()
    assert "holds only common words" in html


def test_nothing_found_offers_the_rows_no_longer_in_force(lead, rows):
    html = lead.get(SEARCH, {"q": "kubernetes"}).content.decode()
    assert "Nothing matches “kubernetes”." in html
    assert 'href="/p/alpha/search/?q=kubernetes&amp;inactive=1"' in html


def test_a_query_too_long_is_refused_with_a_message(lead, rows):
    response = lead.get(SEARCH, {"q": "docs " * 500})
    assert response.status_code == 200
    assert "q: must be at most 2000 characters" in response.content.decode()
    assert hit_ids(response) == []


def test_the_page_says_when_it_shows_only_the_best(lead, project):
    for n in range(55):
        services.memory_record(
            project=project, agent_name="Juno", type="learning", content=f"Deploy note {n}."
        )
    response = lead.get(SEARCH, {"q": "deploy"})
    assert len(hit_ids(response)) == 50
    assert "The 50 best matches are shown." in response.content.decode()


def test_htmx_gets_the_results_region_only(lead, rows):
    response = lead.get(SEARCH, {"q": "docs", "kind": "entry"}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="search-results">')
    assert "<header" not in html
    assert hit_ids(response) == [("entry", str(rows["entry"].pk))]


def test_a_viewer_searches_too(viewer, rows):
    response = viewer.get(SEARCH, {"q": "docs deploy"})
    assert response.status_code == 200
    assert ("entry", str(rows["entry"].pk)) in hit_ids(response)


def test_another_projects_member_gets_a_404(outsider, rows):
    assert outsider.get(SEARCH, {"q": "docs"}).status_code == 404


def test_rows_of_another_project_are_not_found(lead, member, other_project, rows):
    services.decision_create(
        project=other_project,
        agent_name="Juno",
        type="process",
        title="Docs deploy freeze",
        content="x",
        by="l",
    )
    member(other_project, "coordinator", "lead-beta")
    html = lead.get(SEARCH, {"q": "freeze"}).content.decode()
    assert hit_ids(lead.get(SEARCH, {"q": "freeze"})) == []
    assert "Nothing matches" in html


def test_signed_out_it_redirects_to_sign_in(client, project):
    response = client.get(SEARCH, {"q": "docs"})
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_only_get_is_taken(lead, rows):
    assert lead.post(SEARCH, {"q": "docs"}).status_code == 405


@pytest.mark.parametrize("extra", [0, 40])
def test_the_page_makes_a_fixed_number_of_queries(lead, project, rows, django_assert_num_queries, extra):
    for n in range(extra):
        services.memory_record(project=project, agent_name="Juno", type="learning", content=f"Docs note {n}.")
    lead.get(SEARCH, {"q": "docs"})
    # session, user, project, membership, the navigation's counts; decisions, memories with the ended
    # sessions' summaries (one index), the open session, episodes, inbox entries
    with django_assert_num_queries(10):
        lead.get(SEARCH, {"q": "docs"})
