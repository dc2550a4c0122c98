"""The mirror page shows what the last import and export did to each file."""

from __future__ import annotations

from ledger.models import MirrorRun

MIRROR = "/p/alpha/mirror/"


def test_mirror_page_shows_the_report_of_the_last_run_file_by_file(lead, project):
    MirrorRun.objects.create(
        project=project,
        kind="import",
        trigger="dashboard",
        report={
            "adopted": [{"path": ".squad/decisions.md", "what": "12 decisions adopted"}],
            "merged": [],
            "skipped": [{"path": ".squad/decisions/inbox/odd.md", "reason": "empty file"}],
            "conflicts": [],
        },
    )
    MirrorRun.objects.create(
        project=project,
        kind="export",
        trigger="cron",
        report={
            "written": [".squad/decisions.md"],
            "removed": [],
            "backed_up": [{"path": ".squad/decisions.md", "backup": "var/backups/decisions.md"}],
            "kept": [{"path": ".squad/agents/ripley/history.md", "reason": "edited outside Canon"}],
            "errors": [{"path": ".squad/team.md", "error": "could not write: Permission denied"}],
        },
    )
    html = lead.get(MIRROR).content.decode()
    rows = [
        "<td><code>.squad/decisions.md</code></td><td>adopted</td><td>12 decisions adopted</td>",
        "<td><code>.squad/decisions/inbox/odd.md</code></td><td>skipped</td><td>empty file</td>",
        "<td><code>.squad/decisions.md</code></td><td>written</td>",
        "<td><code>.squad/decisions.md</code></td><td>backed up</td>",
        "<code>var/backups/decisions.md</code>",
        "<td><code>.squad/agents/ripley/history.md</code></td><td>left alone</td><td>edited outside Canon</td>",
        '<tr class="problem"><td><code>.squad/team.md</code></td><td>failed</td>',
    ]
    for row in rows:
        assert row in html, row
    assert html.count('<table class="files">') == 2


def test_a_run_recorded_before_reports_were_kept_still_lists_its_warnings(lead, project):
    MirrorRun.objects.create(
        project=project,
        kind="import",
        trigger="cron",
        warnings=[{"path": ".squad/decisions/inbox/bad.md", "reason": "no front matter"}],
    )
    html = lead.get(MIRROR).content.decode()
    assert '<table class="files">' not in html
    assert "<code>.squad/decisions/inbox/bad.md</code>: no front matter" in html


def test_file_paths_and_reasons_are_escaped(lead, project):
    MirrorRun.objects.create(
        project=project,
        kind="export",
        trigger="cron",
        report={"kept": [{"path": "<b>x</b>.md", "reason": '<img src=x onerror="alert(1)">'}]},
    )
    html = lead.get(MIRROR).content.decode()
    assert "<b>x</b>" not in html and "<img src=x" not in html
    assert "&lt;b&gt;x&lt;/b&gt;.md" in html


def test_earlier_runs_are_listed_with_their_reports(lead, project):
    MirrorRun.objects.create(
        project=project,
        kind="import",
        trigger="command",
        counts={"adopted": 1},
        report={"adopted": [{"path": ".squad/decisions.md", "what": "146 decisions adopted"}]},
    )
    for _ in range(2):
        MirrorRun.objects.create(project=project, kind="import", trigger="background", report={})
    MirrorRun.objects.create(project=project, kind="export", trigger="background", counts={"backed_up": 0})
    html = lead.get(MIRROR).content.decode()
    assert "Earlier runs" in html and "146 decisions adopted" in html
    assert "backed up: 0" in html and "backed_up" not in html


def export(project, trigger="background", ok=True):
    return MirrorRun.objects.create(
        project=project, kind="export", trigger=trigger, ok=ok, counts={"written": 1}
    )


def test_background_runs_in_a_row_are_one_line_with_their_count(lead, project):
    by_hand = export(project, trigger="dashboard")
    for _ in range(3):
        export(project)
    failed = export(project, ok=False)
    series = [export(project) for _ in range(4)]  # the newest is the last export, shown above the list
    lines = lead.get(MIRROR).context["earlier"]
    assert [(line.run.pk, line.more) for line in lines] == [
        (series[-2].pk, 2),
        (failed.pk, 0),
        (failed.pk - 1, 2),
        (by_hand.pk, 0),
    ]
    assert lines[0].since == series[0].created_at
    html = lead.get(MIRROR).content.decode()
    assert html.count('<details class="run">') == 4
    assert "and 2 earlier background exports, all succeeded" in html


def test_the_earlier_runs_cost_the_same_queries_however_many_background_runs(
    lead, project, django_assert_num_queries
):
    for _ in range(3):
        export(project)
    lead.get(MIRROR)  # the session is read once
    with django_assert_num_queries(9) as few:
        lead.get(MIRROR)
    for _ in range(200):
        export(project)
    with django_assert_num_queries(len(few.captured_queries)):
        lead.get(MIRROR)
