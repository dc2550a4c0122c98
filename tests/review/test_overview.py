"""The project page's charts (docs/dashboard.md, "Project overview"): the numbers they are drawn from,
the SVG they are drawn as, their empty states and their fixed number of queries."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ledger import services
from ledger.models import Decision, InboxEntry
from review import charts

# A Wednesday: its week starts on Monday 10 March; the eight weeks shown start on Monday 20 January.
NOW = datetime(2025, 3, 12, 15, 0, tzinfo=UTC)
URL = "/p/alpha/"


def proposal(project, slug, *, agent="Alice", type="technical", age=None, title=None):
    entry = services.entry_submit(
        project=project, agent_name=agent, slug=slug, type=type, title=title or slug, content=f"{slug} text"
    ).entry
    if age is not None:
        InboxEntry.objects.filter(pk=entry.pk).update(created_at=NOW - age)
    return entry


def decide(project, slug, status, *, agent="Alice", at=NOW):
    """A proposal merged or rejected at `at`."""
    entry = proposal(project, slug, agent=agent, type="learning")
    if status == "merged":
        services.entry_merge(project=project, entry_id=entry.pk, by="lead")
    else:
        services.entry_reject(project=project, entry_id=entry.pk, by="lead", reason="no")
    InboxEntry.objects.filter(pk=entry.pk).update(reviewed_at=at)
    return entry


def record(project, title, *, created):
    decision = services.decision_create(
        project=project, agent_name="lead", type="technical", title=title, content=title, by="lead"
    )
    Decision.objects.filter(pk=decision.pk).update(created_at=created)
    return decision


def test_inbox_age_counts_pending_proposals_in_their_age_buckets(project, other_project):
    ages = {
        "half-hour": timedelta(minutes=30),
        "almost-hour": timedelta(minutes=59),
        "exactly-hour": timedelta(hours=1),
        "two-hours": timedelta(hours=2),
        "three-days": timedelta(days=3),
        "ten-days": timedelta(days=10),
        "twenty-nine-days": timedelta(days=29),
        "thirty-one-days": timedelta(days=31),
        "a-year": timedelta(days=400),
    }
    for slug, age in ages.items():
        proposal(project, slug, age=age)
    decided = decide(project, "decided", "rejected")
    InboxEntry.objects.filter(pk=decided.pk).update(created_at=NOW - timedelta(minutes=5))
    proposal(other_project, "elsewhere", age=timedelta(minutes=5))

    chart = charts.inbox_age(project, now=NOW)

    assert chart.categories == ["< 1 h", "< 1 day", "< 1 week", "< 1 month", "older"]
    assert chart.values == [[2], [2], [1], [2], [2]]
    assert chart.total == 9


def test_inbox_age_is_one_query(project, django_assert_num_queries):
    proposal(project, "one", age=timedelta(minutes=5))
    with django_assert_num_queries(1):
        charts.inbox_age(project, now=NOW)


def test_weeks_are_the_last_eight_mondays_ending_with_the_current_week():
    weeks = charts.week_starts(NOW)
    assert len(weeks) == charts.WEEKS == 8
    assert weeks[0] == datetime(2025, 1, 20, tzinfo=UTC) and weeks[-1] == datetime(2025, 3, 10, tzinfo=UTC)
    assert all(week.weekday() == 0 for week in weeks)


def test_merged_and_rejected_are_counted_per_agent_and_week(project):
    decide(project, "a1", "merged", agent="Alice", at=NOW - timedelta(hours=2))  # this week
    decide(project, "a2", "merged", agent="Alice", at=datetime(2025, 3, 10, 0, 30, tzinfo=UTC))  # Monday
    decide(project, "a3", "rejected", agent="Alice", at=datetime(2025, 3, 9, 23, 30, tzinfo=UTC))  # Sunday
    decide(project, "b1", "rejected", agent="Bob", at=datetime(2025, 1, 20, 9, 0, tzinfo=UTC))  # first week
    decide(project, "b2", "merged", agent="Bob", at=datetime(2025, 1, 19, 9, 0, tzinfo=UTC))  # too old
    proposal(project, "still-pending")

    result = charts.decided_per_agent(project, now=NOW)

    assert [chart.name for chart in result.charts] == ["Alice", "Bob"]  # the busiest first
    alice, bob = result.charts
    assert [s.key for s in alice.series] == ["merged", "rejected"]
    assert alice.values[-1] == [2, 0] and alice.values[-2] == [0, 1]
    assert sum(map(sum, alice.values)) == 3
    assert bob.values[0] == [0, 1] and sum(map(sum, bob.values)) == 1
    assert result.total == 4
    # One scale for all: Alice's two bars and Bob's one are drawn in proportion.
    assert alice.scale == bob.scale == 2
    (bob_bar,) = bob.rects
    alice_week = [r for r in alice.rects if r.text.startswith("week of 10 March")]
    assert len(alice_week) == 1 and alice_week[0].height == pytest.approx(2 * bob_bar.height, abs=0.2)


def test_agents_beyond_the_busiest_share_one_row(project):
    for i, name in enumerate(["Ann", "Ben", "Cat", "Dan", "Eve", "Fay"]):
        for j in range(6 - i):
            decide(project, f"{name.lower()}-{j}", "merged", agent=name, at=NOW - timedelta(days=1))

    result = charts.decided_per_agent(project, now=NOW)

    assert [chart.name for chart in result.charts] == ["Ann", "Ben", "Cat", "Dan", charts.OTHERS]
    assert sum(map(sum, result.charts[-1].values)) == 2 + 1  # Eve's and Fay's


def test_decisions_are_counted_per_week_recorded_superseded_and_archived(project):
    old = record(project, "Old rule", created=datetime(2024, 6, 1, tzinfo=UTC))
    first = record(project, "First", created=datetime(2025, 2, 4, 10, 0, tzinfo=UTC))  # week of 3 Feb
    record(project, "Second", created=NOW - timedelta(hours=1))
    archived = record(project, "Archived", created=NOW - timedelta(hours=1))
    services.decision_archive(project=project, decision_id=archived.pk, by="lead")
    services.decision_supersede(project=project, decision_id=old.pk, superseded_by_id=first.pk, by="lead")
    Decision.objects.filter(pk=old.pk).update(status_changed_at=datetime(2025, 2, 5, tzinfo=UTC))
    Decision.objects.filter(pk=archived.pk).update(status_changed_at=NOW - timedelta(minutes=5))

    chart = charts.decisions_per_week(project, now=NOW)

    assert [s.label for s in chart.series] == ["recorded", "superseded", "archived"]
    by_week = dict(zip(chart.categories, chart.values, strict=True))
    assert by_week["3 Feb"] == [1, 1, 0]
    assert by_week["10 Mar"] == [2, 0, 1]
    assert chart.total == 5  # the decision recorded in 2024 is outside the eight weeks


def test_the_overview_makes_three_queries_whatever_the_ledger_holds(project, django_assert_num_queries):
    with django_assert_num_queries(3):
        charts.overview(project, now=NOW)
    for i in range(6):
        decide(project, f"d{i}", "merged" if i % 2 else "rejected", agent=f"Agent{i}", at=NOW)
        proposal(project, f"p{i}", age=timedelta(days=i))
        record(project, f"Rule {i}", created=NOW - timedelta(days=7 * i))
    with django_assert_num_queries(3):
        charts.overview(project, now=NOW)


def test_the_project_page_draws_each_chart_as_an_svg_with_a_title_and_a_table(project, lead):
    proposal(project, "waiting", title="Waiting")
    decide(project, "done", "merged", at=datetime.now(UTC))
    record(project, "A rule", created=datetime.now(UTC))

    html = lead.get(URL).content.decode()

    svgs = re.findall(r"<svg class=\"chart-svg\"[^>]*>", html)
    assert len(svgs) == 3  # inbox age, one agent, decisions
    for svg in svgs:
        assert 'role="img"' in svg
        (title_id,) = re.findall(r'aria-labelledby="([^"]+)"', svg)
        assert re.search(rf'<title id="{title_id}">[^<]+</title>', html)
        assert "style=" not in svg
    assert '<title id="chart-age-title">Pending proposals by age</title>' in html
    assert "<caption>Pending proposals by age</caption>" in html
    assert '<th scope="row">less than an hour</th><td>1</td>' in html
    assert re.search(r"<rect [^>]*fill=\"#1f5fbf\"><title>less than an hour: 1 pending</title>", html)
    assert "<caption>Alice: proposals merged and rejected per week</caption>" in html
    assert "<caption>Decisions recorded, superseded and archived per week</caption>" in html
    assert 'class="legend"' in html
    assert " style=" not in html


def test_a_project_with_nothing_in_it_says_so_instead_of_drawing_empty_charts(project, lead):
    html = lead.get(URL).content.decode()

    assert "chart-svg" not in html
    assert "No proposal is waiting." in html
    assert "No proposal was merged or rejected in the last 8 weeks." in html
    assert "No decision was recorded, superseded or archived in the last 8 weeks." in html


def test_a_viewer_sees_the_charts_an_outsider_gets_404_and_a_visitor_the_login(
    project, viewer, outsider, client
):
    proposal(project, "waiting")
    assert "chart-age-title" in viewer.get(URL).content.decode()
    assert outsider.get(URL).status_code == 404
    response = client.get(URL)
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_the_project_page_makes_the_same_number_of_queries_for_a_small_and_a_big_ledger(project, lead):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert lead.get(URL).status_code == 200
        return len(captured)

    # The recent actions name their objects in one query per kind of object: both kinds from the start.
    proposal(project, "first")
    decide(project, "first-decided", "merged", at=datetime.now(UTC))
    record(project, "First rule", created=datetime.now(UTC))
    small = queries()
    for i in range(12):
        proposal(project, f"p{i}", agent=f"Agent{i}", type="architectural" if i % 2 else "learning")
        decide(project, f"d{i}", "merged" if i % 2 else "rejected", agent=f"Agent{i}", at=datetime.now(UTC))
        record(project, f"Rule {i}", created=datetime.now(UTC))
    assert queries() == small


def test_recent_actions_on_the_project_page_name_their_objects_by_title(project, lead):
    entry = proposal(project, "use-postgres", type="architectural", title="Use PostgreSQL")
    services.entry_merge(project=project, entry_id=entry.pk, by="lead")

    html = lead.get(URL).content.decode()

    assert f'merged <a href="/p/alpha/inbox/{entry.pk}/">“Use PostgreSQL”</a>' in html
    assert "inbox entry #" not in html
    assert 'href="/p/alpha/audit/"' in html
