"""The project page's pictures (docs/dashboard.md, "Project overview"): counted in the database, drawn by
the server as SVG.

Each chart is one aggregate query (conditional `COUNT`s, grouped by agent where it is per agent),
never a loop over rows; weeks are cut by their bounds in the server's time zone, the same on SQLite and
PostgreSQL. What comes back is a `BarChart`: the
numbers and the rectangles that draw them, which `templates/review/_chart_bars.html` turns into an
`<svg>` with a title and a data table for screen readers. No script, no chart library, no `style`
attribute: sizes and colours are SVG presentation attributes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count, Q
from django.utils import timezone

from ledger.models import Decision, DecisionStatus, EntryStatus, InboxEntry, Project

# The charts over time show this many weeks, the current one last.
WEEKS = 8
# The merged/rejected chart draws the agents with the most decided proposals; the rest share a row.
TOP_AGENTS = 4

# Drawing area of one chart, in SVG user units (the page scales the picture to its column).
WIDTH = 360
HEIGHT = 150
LEFT = 30  # room for the scale's top value
BOTTOM = 18  # room for the category labels
TOP = 8


@dataclass(frozen=True)
class Series:
    """One kind of bar: its name in the legend and table, and its colour."""

    key: str
    label: str
    colour: str


@dataclass(frozen=True)
class Rect:
    """One drawn bar (or a part of a stacked bar), with what it says for a pointer's tooltip."""

    x: float
    y: float
    width: float
    height: float
    colour: str
    text: str


@dataclass(frozen=True)
class Label:
    x: float
    text: str


@dataclass
class BarChart:
    """Counts per category (an age bucket, a week) and series (merged, rejected…), with their drawing.

    `values[i][j]` is category i's count of series j. `stacked` piles a category's series into one bar;
    otherwise they stand side by side. `scale` is the count the full height stands for: charts drawn
    side by side share one, so their bars compare.
    """

    slug: str
    title: str
    categories: list[str]
    series: list[Series]
    values: list[list[int]]
    stacked: bool = False
    scale: int = 0
    captions: list[str] = field(default_factory=list)  # each category in full, for the data table
    axis: str = "Week"  # what the categories are, the data table's first heading
    name: str = ""  # the short name shown above one of several charts drawn side by side
    width: int = WIDTH
    height: int = HEIGHT

    @property
    def total(self) -> int:
        return sum(sum(row) for row in self.values)

    @property
    def peak(self) -> int:
        """The largest bar: a category's sum when stacked, else its largest count."""
        return max((sum(row) if self.stacked else max(row, default=0) for row in self.values), default=0)

    @property
    def top(self) -> int:
        return max(self.scale, self.peak, 1)

    @property
    def plot_height(self) -> int:
        return self.height - TOP - BOTTOM

    @property
    def baseline(self) -> int:
        return self.height - BOTTOM

    @property
    def left(self) -> int:
        return LEFT

    @property
    def scale_x(self) -> int:
        """Where the scale's numbers end, right-aligned against the plot."""
        return LEFT - 4

    @property
    def top_y(self) -> int:
        return TOP + 8

    @property
    def label_y(self) -> int:
        return self.height - 5

    @property
    def slot(self) -> float:
        return (self.width - LEFT) / max(len(self.categories), 1)

    @property
    def rows(self) -> list[tuple[str, list[int]]]:
        """(category in full, its counts): the screen reader's table."""
        return list(zip(self.captions or self.categories, self.values, strict=True))

    @property
    def labels(self) -> list[Label]:
        return [
            Label(x=round(LEFT + self.slot * (i + 0.5), 1), text=text)
            for i, text in enumerate(self.categories)
        ]

    @property
    def rects(self) -> list[Rect]:
        drawn: list[Rect] = []
        unit = self.plot_height / self.top
        for i, row in enumerate(self.values):
            start = LEFT + self.slot * i
            caption = (self.captions or self.categories)[i]
            if self.stacked:
                width, bottom = self.slot * 0.6, float(self.baseline)
                for series, count in zip(self.series, row, strict=True):
                    if count:
                        height = count * unit
                        bottom -= height
                        drawn.append(
                            _rect(start + self.slot * 0.2, bottom, width, height, series, count, caption)
                        )
            else:
                width = self.slot * 0.8 / len(self.series)
                for j, (series, count) in enumerate(zip(self.series, row, strict=True)):
                    if count:
                        height = count * unit
                        x = start + self.slot * 0.1 + width * j
                        drawn.append(_rect(x, self.baseline - height, width, height, series, count, caption))
        return drawn


def _rect(x: float, y: float, width: float, height: float, series: Series, count: int, caption: str) -> Rect:
    return Rect(
        x=round(x, 1),
        y=round(y, 1),
        width=round(width, 1),
        height=round(height, 1),
        colour=series.colour,
        text=f"{caption}: {count} {series.label}",
    )


# ---------------------------------------------------------------------------------------------
# Inbox age

AGE_BUCKETS: list[tuple[str, str, timedelta | None]] = [
    ("< 1 h", "less than an hour", timedelta(hours=1)),
    ("< 1 day", "an hour to a day", timedelta(days=1)),
    ("< 1 week", "a day to a week", timedelta(days=7)),
    ("< 1 month", "a week to 30 days", timedelta(days=30)),
    ("older", "more than 30 days", None),
]
WAITING = Series("pending", "pending", "#1f5fbf")


def inbox_age(project: Project, *, now: datetime | None = None) -> BarChart:
    """Pending proposals by how long they have waited: one query over the review queue's index."""
    now = now or timezone.now()
    counts: dict[str, Any] = {}
    younger: datetime | None = None  # the previous bucket's lower bound
    for i, (_, _, age) in enumerate(AGE_BUCKETS):
        since = now - age if age is not None else None
        window = Q()
        if since is not None:  # younger than `age`: exactly an hour old is in "< 1 day"
            window &= Q(created_at__gt=since)
        if younger is not None:
            window &= Q(created_at__lte=younger)
        counts[f"b{i}"] = Count("status", filter=window)
        younger = since
    totals = InboxEntry.objects.filter(project=project, status=EntryStatus.PENDING).aggregate(**counts)
    return BarChart(
        slug="age",
        title="Pending proposals by age",
        categories=[short for short, _, _ in AGE_BUCKETS],
        captions=[long for _, long, _ in AGE_BUCKETS],
        axis="Waiting for",
        series=[WAITING],
        values=[[totals[f"b{i}"] or 0] for i in range(len(AGE_BUCKETS))],
    )


# ---------------------------------------------------------------------------------------------
# Weeks


def week_starts(now: datetime | None = None) -> list[datetime]:
    """The Mondays, at midnight in the server's time zone, of the last `WEEKS` weeks, oldest first."""
    today = timezone.localtime(now or timezone.now()).date()
    this_week = today - timedelta(days=today.weekday())
    mondays = [this_week - timedelta(weeks=WEEKS - 1 - i) for i in range(WEEKS)]
    return [timezone.make_aware(datetime(d.year, d.month, d.day)) for d in mondays]


def per_week(field: str, weeks: list[datetime], prefix: str, **also: Any) -> dict[str, Count]:
    """One count per week of the rows whose `field` falls in it (and that match `also`): `{prefix}{i}`.

    Conditional counts over the week's bounds rather than `TruncWeek`: the database compares dates
    in one pass, where SQLite would call a Python function on every row to cut its week.
    """
    ends = [*weeks[1:], None]
    counts = {}
    for i, (start, end) in enumerate(zip(weeks, ends, strict=True)):
        window = Q(**{f"{field}__gte": start}, **also)
        if end is not None:
            window &= Q(**{f"{field}__lt": end})
        counts[f"{prefix}{i}"] = Count("id", filter=window)
    return counts


def _week_labels(weeks: list[datetime]) -> tuple[list[str], list[str]]:
    short = [f"{w.day} {w:%b}" for w in weeks]
    return short, [f"week of {w.day} {w:%B %Y}" for w in weeks]


# ---------------------------------------------------------------------------------------------
# Merged and rejected per agent

MERGED = Series(EntryStatus.MERGED, "merged", "#1d7a46")
REJECTED = Series(EntryStatus.REJECTED, "rejected", "#b3261e")
OTHERS = "Other agents"


@dataclass
class AgentCharts:
    """One small chart per agent (the busiest first, the rest together), all on one scale."""

    charts: list[BarChart]
    series: list[Series]
    weeks: int = WEEKS

    @property
    def total(self) -> int:
        return sum(chart.total for chart in self.charts)


def decided_per_agent(project: Project, *, now: datetime | None = None) -> AgentCharts:
    """Proposals merged and rejected per agent and week (when they were decided): one query, grouped
    by agent."""
    weeks = week_starts(now)
    series = [MERGED, REJECTED]
    counts = {}
    for s in series:
        counts.update(per_week("reviewed_at", weeks, f"{s.key}_", status=s.key))
    rows = (
        InboxEntry.objects.filter(
            project=project,
            status__in=[EntryStatus.MERGED, EntryStatus.REJECTED],
            reviewed_at__gte=weeks[0],
        )
        .values("agent__name")
        .annotate(**counts)
        .order_by()
    )
    # agent → [week][series]
    grid = {
        row["agent__name"]: [[row[f"{s.key}_{i}"] for s in series] for i in range(len(weeks))] for row in rows
    }
    busiest = sorted(grid, key=lambda name: (-sum(map(sum, grid[name])), name.lower()))
    shown = busiest[:TOP_AGENTS]
    if len(busiest) > TOP_AGENTS:
        rest = [
            [sum(grid[name][i][j] for name in busiest[TOP_AGENTS:]) for j in range(len(series))]
            for i in range(len(weeks))
        ]
        grid[OTHERS] = rest
        shown.append(OTHERS)
    short, long = _week_labels(weeks)
    charts = [
        BarChart(
            slug=f"agent-{i}",
            title=f"{name}: proposals merged and rejected per week",
            name=name,
            categories=short,
            captions=long,
            series=series,
            values=grid[name],
            stacked=True,
            height=90,
        )
        for i, name in enumerate(shown)
    ]
    _share_scale(charts)
    return AgentCharts(charts=charts, series=series)


def _share_scale(charts: Iterable[BarChart]) -> None:
    charts = list(charts)
    peak = max((chart.peak for chart in charts), default=0)
    for chart in charts:
        chart.scale = peak


# ---------------------------------------------------------------------------------------------
# Decisions over time

CREATED = Series("created", "recorded", "#1f5fbf")
SUPERSEDED = Series(DecisionStatus.SUPERSEDED, "superseded", "#8a5a00")
ARCHIVED = Series(DecisionStatus.ARCHIVED, "archived", "#5d6875")


def decisions_per_week(project: Project, *, now: datetime | None = None) -> BarChart:
    """Decisions recorded, superseded and archived per week, each by the date it happened
    (`created_at`, `status_changed_at`): one query."""
    weeks = week_starts(now)
    counts = {
        **per_week("created_at", weeks, "created_"),
        **per_week("status_changed_at", weeks, "superseded_", status=DecisionStatus.SUPERSEDED),
        **per_week("status_changed_at", weeks, "archived_", status=DecisionStatus.ARCHIVED),
    }
    totals = Decision.objects.filter(
        Q(created_at__gte=weeks[0]) | Q(status_changed_at__gte=weeks[0]), project=project
    ).aggregate(**counts)
    short, long = _week_labels(weeks)
    series = [CREATED, SUPERSEDED, ARCHIVED]
    return BarChart(
        slug="decisions",
        title="Decisions recorded, superseded and archived per week",
        categories=short,
        captions=long,
        series=series,
        values=[[totals[f"{s.key}_{i}"] or 0 for s in series] for i in range(len(weeks))],
    )


def overview(project: Project, *, now: datetime | None = None) -> dict[str, Any]:
    """Every chart of the project page, in three queries."""
    now = now or timezone.now()
    return {
        "age_chart": inbox_age(project, now=now),
        "agent_charts": decided_per_agent(project, now=now),
        "decision_chart": decisions_per_week(project, now=now),
    }
