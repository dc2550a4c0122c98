"""The dashboard's lists searched with `q`: relevance order, highlighted words, escaped text."""

from __future__ import annotations

import pytest

from ledger import services
from review.templatetags.review_tags import highlight

INBOX, DECISIONS, MEMORY = "/p/alpha/inbox/", "/p/alpha/decisions/", "/p/alpha/memory/"


def submit(project, slug, title, content="text", **kw):
    kw.setdefault("type", "technical")
    return services.entry_submit(
        project=project, agent_name="Alice", slug=slug, title=title, content=content, **kw
    ).entry


def decide(project, title, content):
    return services.decision_create(
        project=project, agent_name="lead", type="technical", title=title, content=content, by="l"
    )


def remember(project, content, agent="Alice"):
    return services.memory_record(project=project, agent_name=agent, type="learning", content=content)


def test_highlight_marks_the_searched_words_and_their_forms():
    html = highlight("Migrations of the cache: caching rules, Cached, cachet.", "migration caching")
    assert html == (
        "<mark>Migrations</mark> of the <mark>cache</mark>: <mark>caching</mark> rules, <mark>Cached</mark>, "
        "cachet."
    )


def test_highlight_marks_a_prefix_and_ignores_case_and_accents():
    assert highlight("PostgreSQL and Café", "postg cafe") == "<mark>PostgreSQL</mark> and <mark>Café</mark>"


def test_highlight_escapes_before_marking():
    html = highlight('<script>alert("x")</script> script & <b>', "script")
    assert html == (
        "&lt;<mark>script</mark>&gt;alert(&quot;x&quot;)&lt;/<mark>script</mark>&gt; "
        "<mark>script</mark> &amp; &lt;b&gt;"
    )


@pytest.mark.parametrize("q", ["", None, "the", "!!!"])
def test_highlight_without_a_word_only_escapes(q):
    assert highlight("<i>the</i> text", q) == "&lt;i&gt;the&lt;/i&gt; text"


def test_inbox_search_is_by_relevance_and_highlights(lead, project):
    submit(project, "passing", "Background jobs", content="One job warms the cache nightly.")
    submit(project, "titled", "Cache policy", content="Kept for an hour.", type="scope")
    submit(project, "other", "Unrelated", content="Nothing to see.")
    response = lead.get(INBOX, {"q": "cache"})
    assert [e.slug for e in response.context["page"].object_list] == ["titled", "passing"]
    html = response.content.decode()
    assert "<strong><mark>Cache</mark> policy</strong>" in html
    assert "warms the <mark>cache</mark> nightly" in html


def test_inbox_search_finds_words_that_are_not_adjacent(lead, project):
    submit(project, "two", "Retry payments", content="When the webhook fails, retry the payment.")
    response = lead.get(INBOX, {"q": "webhook payment"})
    assert [e.slug for e in response.context["page"].object_list] == ["two"]


def test_inbox_search_keeps_its_order_on_later_pages(lead, project):
    for i in range(55):
        words = "deploy " * (1 + i % 5)
        submit(project, f"e{i:02d}", f"Entry {i}", content=f"{words}the service")
    first = lead.get(INBOX, {"q": "deploy"}).context["page"].object_list
    second = lead.get(INBOX, {"q": "deploy", "page": 2}).context["page"].object_list
    slugs = [e.slug for e in first] + [e.slug for e in second]
    assert sorted(slugs) == sorted(f"e{i:02d}" for i in range(55))
    # The entries that say `deploy` five times come first.
    assert {e.slug for e in first[:11]} == {f"e{i:02d}" for i in range(55) if i % 5 == 4}


def test_decision_search_highlights_title_and_excerpt(lead, project):
    decide(project, "Use PostgreSQL", "All state in PostgreSQL.")
    html = lead.get(DECISIONS, {"q": "postgres"}).content.decode()
    assert "<strong>Use <mark>PostgreSQL</mark></strong>" in html
    assert "All state in <mark>PostgreSQL</mark>." in html


def test_memory_search_escapes_script_and_highlights(lead, project):
    remember(project, "<script>alert(1)</script> never trust the payload\nsecond line")
    html = lead.get(MEMORY, {"q": "payload"}).content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; never trust the <mark>payload</mark><br>second line" in html


def test_lists_without_q_show_no_marks(lead, project):
    remember(project, "payload")
    assert "<mark>" not in lead.get(MEMORY).content.decode()


@pytest.mark.parametrize(
    "q", ['"', "NEAR(", "a OR b", "-x", "col:", "(((", "AND NOT", "*", "'", "\\", "<script>"]
)
def test_query_syntax_never_breaks_a_list(lead, project, q):
    remember(project, "a memory")
    decide(project, "A decision", "text")
    submit(project, "an-entry", "An entry")
    for url in (INBOX, DECISIONS, MEMORY):
        response = lead.get(url, {"q": q})
        assert response.status_code == 200, url
        assert "<script>" not in response.content.decode().split("<main", 1)[-1]


def test_viewer_searches_too(viewer, project):
    remember(project, "visible to viewers")
    response = viewer.get(MEMORY, {"q": "viewers"})
    assert [m.content for m in response.context["page"].object_list] == ["visible to viewers"]


def test_another_projects_rows_are_never_found(lead, project, other_project):
    remember(other_project, "secret of beta")
    assert list(lead.get(MEMORY, {"q": "secret"}).context["page"].object_list) == []


@pytest.mark.parametrize("size", [3, 60])
def test_searched_lists_make_a_fixed_number_of_queries(lead, project, django_assert_num_queries, size):
    for i in range(size):
        remember(project, f"note {i} about caching")
        decide(project, f"rule {i} about caching", "text")
        submit(project, f"e{i}", f"entry {i} about caching")
    # session, user, project, membership, page count, counts, page rows; the memory list first reads
    # which matches are the newest it ranks (`ledger.search.RANKED_MEMORIES`), once for its count and its
    # page; the inbox reads its page's ids and then their rows, and also the agent select's agents, the
    # reviewer's density, and what its rows compete with (four queries here)
    for url, queries in ((MEMORY, 8), (DECISIONS, 7), (INBOX, 14)):
        lead.get(url, {"q": "caching"})
        with django_assert_num_queries(queries):
            response = lead.get(url, {"q": "caching"})
        assert len(response.context["page"].object_list) == min(size, 50)
