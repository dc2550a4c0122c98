"""Every list answers with the whole page, or for an htmx request with its region only
(`review.views.base.render_list`)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser
from django.test import RequestFactory
from django_htmx.middleware import HtmxDetails

from ledger import context, services
from review.access import ProjectAccess
from review.views.base import paginate, project_context, render_list

LISTS = [
    ("/p/alpha/inbox/", "inbox-list"),
    ("/p/alpha/decisions/", "decision-list"),
    ("/p/alpha/memory/", "memory-list"),
    ("/p/alpha/sessions/", "session-list"),
    ("/p/alpha/compilations/", "compilation-list"),
]


@pytest.fixture
def rows(project, entry, decision):
    services.memory_record(project=project, agent_name="Alice", type="learning", content="Remember.")
    services.session_start(project=project, session_id="s1", focus_area="auth")
    context.compile(project, "Alice", run_id="run-1")


def request_for(htmx: bool):
    headers = {"HX-Request": "true"} if htmx else {}
    request = RequestFactory().get("/p/alpha/sessions/", headers=headers)
    request.user = AnonymousUser()
    request.htmx = HtmxDetails(request)
    return request


@pytest.mark.parametrize("htmx", [False, True], ids=["page", "htmx"])
def test_the_helper_renders_the_page_or_only_the_named_partial(project, htmx):
    services.session_start(project=project, session_id="sprint-7")
    access = ProjectAccess(project=project, role="viewer")
    page = paginate(list(project.sessions.all()), None)
    response = render_list(
        request_for(htmx), "review/sessions.html", "session-list", project_context(access, page=page)
    )
    html = response.content.decode()
    assert response.status_code == 200 and "sprint-7" in html
    if htmx:
        assert html.lstrip().startswith('<div id="session-list">') and "<html" not in html
        assert "<h1>Sessions</h1>" not in html
    else:
        assert "<html" in html and "<h1>Sessions</h1>" in html and '<div id="session-list">' in html


def test_the_helper_passes_the_status_on(project):
    access = ProjectAccess(project=project, role="viewer")
    page = paginate([], None)
    response = render_list(
        request_for(True),
        "review/sessions.html",
        "session-list",
        project_context(access, page=page),
        status=400,
    )
    assert response.status_code == 400


@pytest.mark.parametrize(("path", "region"), LISTS)
def test_every_list_is_a_whole_page_or_for_htmx_its_region(lead, rows, path, region):
    page = lead.get(path).content.decode()
    fragment = lead.get(path, headers={"HX-Request": "true"}).content.decode()
    assert "<html" in page and f'<div id="{region}">' in page
    assert "<html" not in fragment and 'class="filters"' not in fragment
    assert fragment.lstrip().startswith(f'<div id="{region}">')
    assert 'class="entries"' in fragment or 'class="sessions"' in fragment


@pytest.mark.parametrize(("path", "region"), LISTS)
def test_the_region_keeps_the_filters_of_the_url(lead, rows, path, region):
    fragment = lead.get(path, {"agent": "nobody-at-all"}, headers={"HX-Request": "true"}).content.decode()
    if region == "session-list":  # sessions have no filters
        assert "s1" in fragment
    else:
        assert 'class="entries"' not in fragment and 'class="empty"' in fragment
