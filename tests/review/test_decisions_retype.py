"""Retyping decisions in bulk, finding adopted ones, and an adopted decision's page."""

from __future__ import annotations

import pytest
from django.urls import reverse

from ledger import services
from ledger.models import AuditEvent, Decision

DECISIONS = "/p/alpha/decisions/"
RETYPE = "/p/alpha/decisions/retype"
BLOCK = "### 2026-01-05: Use PostgreSQL\n**By:** Ripley\n**What:** All state in *PostgreSQL*.\n**Why:** <one engine>\n"


def make(project, title, **kw):
    kw.setdefault("type", "technical")
    return services.decision_create(
        project=project, agent_name="lead", title=title, content=f"{title}.", by="l", **kw
    )


def adopt(project, *titles, origin=".squad/decisions.md"):
    items = [
        services.Adopted(markdown=BLOCK if i == 0 else f"### {t}\n", content=f"{t}.", type="", title=t)
        for i, t in enumerate(titles)
    ]
    return services.decisions_adopt(project=project, items=items, origin=origin)


def types(*decisions):
    return [Decision.objects.get(pk=d.pk).type for d in decisions]


def test_retype_with_a_plain_post_redirects_back_to_the_filtered_list(lead, project):
    a, b, c, untouched = (make(project, t) for t in ["A", "B", "C", "D"])
    response = lead.post(
        RETYPE,
        {"ids": [a.pk, b.pk, c.pk], "type": "architectural", "next": f"{DECISIONS}?type=technical&q=x"},
    )
    assert response.status_code == 302 and response["Location"] == f"{DECISIONS}?type=technical&q=x"
    assert types(a, b, c, untouched) == ["architectural"] * 3 + ["technical"]
    assert b"3 decisions are now architectural" in lead.get(response["Location"]).content


def test_retype_over_htmx_rerenders_the_filtered_list_with_the_message(lead, project):
    a, b = make(project, "A"), make(project, "B")
    response = lead.post(
        RETYPE,
        {"ids": [a.pk], "type": "scope", "next": f"{DECISIONS}?type=technical"},
        HTTP_HX_REQUEST="true",
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="decision-list">') and "<html" not in html
    assert '<div id="messages" aria-live="polite" hx-swap-oob="true">' in html
    assert "1 decision is now scope." in html
    assert [d.pk for d in response.context["page"].object_list] == [b.pk]
    assert f'name="next" value="{DECISIONS}?type=technical"' in html


def test_retype_leaves_decisions_of_another_project_alone(lead, project, other_project):
    ours = make(project, "Ours")
    theirs = make(other_project, "Theirs")
    response = lead.post(RETYPE, {"ids": [ours.pk, theirs.pk], "type": "process"}, follow=True)
    assert types(ours, theirs) == ["process", "technical"]
    assert b"1 decision is now process." in response.content
    assert not AuditEvent.objects.filter(project=other_project, action="retype").exists()


def test_retype_writes_one_audit_event_per_decision_changed(lead, project):
    a, b = make(project, "A"), make(project, "B", type="scope")
    lead.post(RETYPE, {"ids": [a.pk, b.pk], "type": "scope"})
    events = AuditEvent.objects.filter(action="retype")
    assert [(e.object_type, e.object_id, e.actor, e.via) for e in events] == [
        ("decision", a.pk, "lead", "dashboard")
    ]
    assert events.get().detail == {"from": "technical", "to": "scope"}


def test_retype_to_the_type_they_have_says_nothing_changed(lead, project):
    a = make(project, "A", type="scope")
    response = lead.post(RETYPE, {"ids": [a.pk], "type": "scope"}, follow=True)
    assert b"Nothing changed: the selected decisions are already scope." in response.content
    assert not AuditEvent.objects.filter(action="retype").exists()


def test_viewer_gets_403_and_nothing_changes(viewer, project):
    a = make(project, "A")
    assert viewer.post(RETYPE, {"ids": [a.pk], "type": "scope"}).status_code == 403
    assert types(a) == ["technical"]


def test_non_member_gets_404(outsider, project):
    a = make(project, "A")
    assert outsider.post(RETYPE, {"ids": [a.pk], "type": "scope"}).status_code == 404
    assert types(a) == ["technical"]


def test_get_is_refused_with_405(lead, project):
    assert lead.get(RETYPE).status_code == 405


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"type": "bogus"}, "is not one of: architectural, scope, process, technical"),
        ({"type": ""}, "Choose the type to give the selected decisions."),
        ({"type": "scope", "ids": []}, "Select at least one decision"),
        ({"type": "scope", "ids": ["x", "²"]}, "Select at least one decision"),
        ({"type": "scope", "ids": [str(i) for i in range(501)]}, "Select at most 500 decisions"),
    ],
)
def test_bad_input_is_a_message_and_a_redirect_back(lead, project, data, message):
    a = make(project, "A")
    data = {"ids": [a.pk], **data, "next": f"{DECISIONS}?status=all"}
    response = lead.post(RETYPE, data)
    assert response.status_code == 302 and response["Location"] == f"{DECISIONS}?status=all"
    html = lead.get(response["Location"]).content.decode()
    assert "message error" in html and message in html
    assert types(a) == ["technical"]


@pytest.mark.parametrize(
    "data", [{"type": "bogus", "ids": ["1"]}, {"type": "scope"}], ids=["bad type", "no ids"]
)
def test_bad_input_over_htmx_is_a_400_with_the_list_and_the_message(lead, project, data):
    response = lead.post(RETYPE, data, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 400
    assert html.lstrip().startswith('<div id="decision-list">')
    assert 'hx-swap-oob="true"' in html and "message error" in html


@pytest.mark.parametrize(
    "target",
    [
        "https://evil.example/p/alpha/decisions/",
        "//evil.example/p/alpha/decisions/",
        "/p/alpha/decisions/../../../admin/",
        "/p/alpha/inbox/?type=scope",
        "/p/beta/decisions/?type=scope",
    ],
)
def test_next_only_ever_leads_back_to_the_decision_list(lead, project, target):
    a = make(project, "A")
    response = lead.post(RETYPE, {"ids": [a.pk], "type": "scope", "next": target})
    assert response["Location"] == DECISIONS


def test_coordinators_get_a_checkbox_per_row_and_the_retype_bar(lead, project):
    a, b = make(project, "Same title"), make(project, "Same title")
    html = lead.get(DECISIONS, {"type": "technical"}).content.decode()
    assert f'action="{RETYPE}"' in html and f'hx-post="{RETYPE}"' in html
    assert f'name="next" value="{DECISIONS}?type=technical"' in html
    assert '<select name="type" required>' in html and "Change type</button>" in html
    for d in (a, b):
        assert f'name="ids" value="{d.pk}" aria-label="Select #{d.pk} Same title"' in html


def test_viewers_get_neither_checkboxes_nor_the_retype_bar(viewer, project):
    make(project, "A")
    html = viewer.get(DECISIONS).content.decode()
    assert 'name="ids"' not in html and RETYPE not in html and "Change type" not in html


def test_filter_by_source_finds_the_adopted_decisions(lead, project):
    mine = make(project, "Written here")
    first, second = adopt(project, "Adopted one", "Adopted two")
    listed = lambda **q: {d.pk for d in lead.get(DECISIONS, q).context["page"].object_list}  # noqa: E731
    assert listed(source="import") == {first.pk, second.pk}
    assert listed(source="coordinator") == {mine.pk}
    assert listed() == {mine.pk, first.pk, second.pk}
    assert b"adopted</span>" in lead.get(DECISIONS, {"source": "import"}).content


def test_unknown_source_is_a_message_not_an_error(lead, project):
    response = lead.get(DECISIONS, {"source": "nowhere"})
    assert response.status_code == 200 and b"Source: " in response.content


@pytest.mark.parametrize("size", [3, 60])
def test_decision_list_filtered_by_source_makes_a_fixed_number_of_queries(
    lead, project, django_assert_num_queries, size
):
    adopt(project, *(f"rule {i}" for i in range(size)))
    lead.get(DECISIONS)
    # session, user, project, membership, page count, counts, page rows
    with django_assert_num_queries(7):
        response = lead.get(DECISIONS, {"source": "import", "type": "technical"})
    assert len(response.context["page"].object_list) == min(size, 50)


def test_adopted_decisions_arrive_technical_and_can_be_retyped_together(lead, project):
    adopted = adopt(project, "One", "Two", "Three")
    assert types(*adopted) == ["technical"] * 3
    response = lead.post(RETYPE, {"ids": [d.pk for d in adopted], "type": "architectural"}, follow=True)
    assert b"3 decisions are now architectural." in response.content
    assert types(*adopted) == ["architectural"] * 3


def test_adopted_decision_page_shows_its_origin_and_the_block_verbatim(lead, project):
    (decision,) = adopt(project, "Use PostgreSQL", origin=".squad/decisions.md")
    html = lead.get(reverse("review:decision", args=["alpha", decision.pk])).content.decode()
    assert "Adopted from <code>.squad/decisions.md</code>" in html
    assert "<summary>As the team wrote it</summary>" in html
    verbatim = BLOCK.replace("<", "&lt;").replace(">", "&gt;")
    assert f'<pre class="context">{verbatim}</pre>' in html


def test_a_decision_written_here_shows_no_origin(lead, project, decision):
    html = lead.get(reverse("review:decision", args=["alpha", decision.pk])).content.decode()
    assert "Adopted from" not in html and "As the team wrote it" not in html


def test_a_held_decision_is_marked_and_retyping_it_to_its_own_type_releases_it(lead, project):
    """A block added to an adopted log after its adoption is held for review: the list and its page say
    so, and retyping it to the type it already has is a coordinator's act that releases it."""
    (first,) = adopt(project, "Kept")
    (held,) = services.decisions_adopt(
        project=project,
        items=[
            services.Adopted(
                markdown="### Added later\n", content="Added later.", type="", title="Added later"
            )
        ],
        origin=".squad/decisions.md",
        boundaries=False,
    )
    assert held.held and not first.held
    listed = lead.get(DECISIONS).content.decode()
    assert listed.count("held for review") == 1
    page = lead.get(reverse("review:decision", args=[project.slug, held.pk])).content.decode()
    assert "held for review" in page and "reaches no agent's context" in page
    assert (
        "held for review"
        not in lead.get(reverse("review:decision", args=[project.slug, first.pk])).content.decode()
    )
    response = lead.post(RETYPE, {"ids": [held.pk], "type": "technical", "next": DECISIONS})
    assert response.status_code == 302
    assert not Decision.objects.get(pk=held.pk).held
    assert "held for review" not in lead.get(DECISIONS).content.decode()
    assert AuditEvent.objects.filter(action="retype", object_id=str(held.pk)).exists()
