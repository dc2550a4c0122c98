"""Context compile latency on a large ledger, against a hand-written floor.

    python bench/compile.py                     # SQLite (temporary file)
    python bench/compile.py --database-url postgres://postgres@127.0.0.1:5432/postgres

Seeds 100,000 memories over 50 agents, 5,000 decisions (the newest 60 active, and 40% of the older
technical and process ones: about 1,000 active decisions, the rest superseded or archived) and 500
sessions, then times 1,000 compiles for random agents through `ledger.context.compile`, and the same
selection made with the fewest hand-written SQL queries through the bare database driver (the floor:
one query for boundaries, one for the merged memory candidates, one for the session, the same text
assembly). Prints median and p95 of both and their ratio.

Then the task scenario: the same ledger with a realistic vocabulary (the words of the relevance
check's memories, drawn as often as they occur there, in memories and decisions alike), 3% of
memories cross-team, 2% closed sessions' summaries, and 20,000 episodes; 1,000 compiles with a task
(the relevance check's tasks) through `ledger.context.compile`, against a floor made of the same
queries run raw through the bare driver with nothing around them (no blending, no rendering).
"""

from __future__ import annotations

import random
import statistics
import time
from datetime import timedelta

from _setup import memory_row, parse_args, percentile, setup_django

AGENTS = 50
MEMORIES = 100_000
DECISIONS = 5_000
# The share of the older technical and process decisions left active: the relevant layer's candidates.
ACTIVE_DECISIONS = 0.4
SESSIONS = 500
COMPILES = 1_000
EPISODES = 20_000


def vocabulary() -> tuple[list[str], list[int]]:
    """The words of the relevance check's memories, each with how often it occurs there."""
    from collections import Counter

    from tests.relevance.memories import MEMORIES

    counts = Counter(word for memory in MEMORIES for word in memory.content.split())
    return list(counts), list(counts.values())


def seed() -> object:
    from django.utils import timezone

    from ledger import services
    from ledger.blocks import decision_block
    from ledger.models import Agent, AgentMemory, Decision, Episode, Session
    from ledger.tokens import count_tokens

    rng = random.Random(7)
    project, _ = services.project_create_or_update(slug="bench", name="Bench")
    agents = Agent.objects.bulk_create(
        [Agent(project=project, key=f"agent-{i}", name=f"Agent-{i}") for i in range(AGENTS)]
    )
    start = timezone.now() - timedelta(days=365)
    words, weights = vocabulary()
    decisions = []
    for i in range(DECISIONS):
        d = Decision(
            project=project,
            agent=rng.choice(agents),
            type=rng.choice(["architectural", "scope", "process", "technical"]),
            title=f"Decision {i}: {' '.join(rng.choices(words, weights, k=rng.randint(3, 8)))}",
            content=" ".join(rng.choices(words, weights, k=rng.randint(15, 80))),
            rationale=" ".join(rng.choices(words, weights, k=rng.randint(0, 20))),
            source=rng.choice(["coordinator", "inbox", "import"]),
            created_at=start + timedelta(minutes=i * 100),
        )
        d.tokens = count_tokens(decision_block(d))
        decisions.append(d)
    decisions = Decision.objects.bulk_create(decisions, batch_size=500)
    # The newest 60 stay active, and ACTIVE_DECISIONS of the older technical and process ones; of the
    # rest, half archived, half superseded by the next one.
    archived = []
    for i, d in enumerate(decisions[:-60]):
        if d.type in ("technical", "process") and rng.random() < ACTIVE_DECISIONS:
            continue
        if i % 2:
            archived.append(d.pk)
        else:
            Decision.objects.filter(pk=d.pk).update(status="superseded", superseded_by=decisions[i + 1].pk)
    Decision.objects.filter(pk__in=archived).update(status="archived")
    rows = []
    for i in range(MEMORIES):
        content = " ".join(rng.choices(words, weights, k=rng.randint(8, 60)))
        importance = rng.choice(["high", "medium", "low"])
        tags = ["cross-team"] if rng.random() < 0.03 else []
        rows.append(
            memory_row(
                project=project,
                agent=rng.choice(agents),
                type=rng.choice(["core_context", "learning", "pattern", "update"]),
                importance=importance,
                content=content,
                tags=tags,
                source="session_summary" if rng.random() < 0.02 else "agent",
                status="archived" if rng.random() < 0.1 else "active",
                created_at=start + timedelta(seconds=i * 300),
            )
        )
    AgentMemory.objects.bulk_create(rows, batch_size=2000)
    Episode.objects.bulk_create(
        [
            Episode(
                project=project,
                agent=rng.choice(agents),
                run_id=f"run-{i}",
                outcome=rng.choice(["succeeded", "failed", "abandoned"]),
                tried=" ".join(rng.choices(words, weights, k=rng.randint(10, 40))),
                difficulties=" ".join(rng.choices(words, weights, k=rng.randint(0, 20))),
                feedback=" ".join(rng.choices(words, weights, k=rng.randint(0, 15))),
                tokens=rng.randint(20, 120),
                created_at=start + timedelta(seconds=i * 1500),
            )
            for i in range(EPISODES)
        ],
        batch_size=2000,
    )
    Session.objects.bulk_create(
        [
            Session(
                project=project,
                session_id=f"s{i}",
                focus_area=f"focus {i}",
                active_issues=[f"#{i}"],
                summary="summary",
                ended_at=None if i == SESSIONS - 1 else timezone.now(),
            )
            for i in range(SESSIONS)
        ]
    )
    return project


FLOOR_MEMORY_SQL = """
SELECT id, type, content, tokens, agent_key, agent_name FROM (
  SELECT * FROM (
    SELECT m.id, m.importance_rank, m.created_at, m.type, m.content, m.tokens, a.key AS agent_key,
           a.name AS agent_name
    FROM ledger_agentmemory m JOIN ledger_agent a ON a.id = m.agent_id
    WHERE m.agent_id = {p} AND m.status = 'active' AND (m.expires_at IS NULL OR m.expires_at > {p})
      AND (m.type = 'core_context' OR (m.type IN ('learning', 'pattern') AND m.importance_rank = 0))
    ORDER BY m.importance_rank, m.created_at DESC, m.id DESC LIMIT {limit}
  ) own
  UNION ALL
  SELECT * FROM (
    SELECT m.id, m.importance_rank, m.created_at, m.type, m.content, m.tokens, a.key, a.name
    FROM ledger_agentmemory m JOIN ledger_agent a ON a.id = m.agent_id
    WHERE m.project_id = {p} AND m.cross_team AND m.status = 'active' AND m.importance_rank = 0
      AND (m.expires_at IS NULL OR m.expires_at > {p})
      AND m.type IN ('learning', 'pattern') AND m.agent_id <> {p}
    ORDER BY m.importance_rank, m.created_at DESC, m.id DESC LIMIT {limit}
  ) shared
) c ORDER BY importance_rank, created_at DESC, id DESC
"""


def floor_compile(
    raw, engine: str, project_id: int, agent_id: int, key: str, max_items: int, max_tokens: int
) -> str:
    """The same selection and text in the fewest hand-written queries, through the bare driver."""
    from django.db import connection
    from django.utils import timezone

    from ledger.blocks import decision_text, memory_line
    from ledger.context import BOUNDARIES_HEADING

    mark = "?" if engine == "sqlite" else "%s"
    cur = raw.cursor()
    cur.execute(
        "SELECT d.title, d.type, a.name, d.content, d.rationale FROM ledger_decision d "
        "JOIN ledger_agent a ON a.id = d.agent_id WHERE d.project_id = "
        f"{mark} AND d.status = 'active' AND d.type IN ('architectural', 'scope') "
        "ORDER BY d.created_at, d.id",
        (project_id,),
    )
    sections = []
    blocks = [decision_text(*row) for row in cur.fetchall()]
    if blocks:
        sections.append(BOUNDARIES_HEADING + "\n\n" + "\n\n".join(blocks))
    sql = FLOOR_MEMORY_SQL.format(p=mark, limit=max(2 * max_items, 50))
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    cur.execute(sql, (agent_id, now, project_id, now, agent_id))
    lines, remaining = [], max_tokens
    for _id, type_, content, tokens, row_key, name in cur.fetchall():
        if len(lines) >= max_items:
            break
        if tokens > remaining:
            continue
        remaining -= tokens
        lines.append(memory_line(type_=type_, content=content, own=row_key == key, agent_name=name))
    if lines:
        sections.append("## Memory\n" + "\n".join(lines))
    cur.execute(
        "SELECT focus_area, active_issues, summary FROM ledger_session "
        f"WHERE project_id = {mark} AND ended_at IS NULL",
        (project_id,),
    )
    row = cur.fetchone()
    if row:
        sections.append(f"## Current Session\n**Focus:** {row[0]}")
    return "\n\n".join(sections)


def floor_relevant(
    raw,
    engine: str,
    project_id: int,
    key: str,
    task: str,
    words: list[str],
    kept: list[str],
    expiry: object,
    limit: int,
) -> None:
    """The relevant layer's queries, raw: the compiler's own SQL through the bare driver (on SQLite with
    the count of each word's rows that leaves out the common ones; PostgreSQL reads them from its
    statistics, cached)."""
    from ledger.context import (
        RELEVANT_CANDIDATES,
        RELEVANT_DECISION_SQL,
        RELEVANT_EPISODE_SQL,
        RELEVANT_MEMORY_SQL,
    )
    from ledger.relevance import fts5_any, pg_any, task_pieces
    from ledger.word_stats import COMMON_SHARE, MEMORIES, SHARES_SQLITE_WORD

    mark = "?" if engine == "sqlite" else "%s"
    cur = raw.cursor()
    if engine == "sqlite":
        one = SHARES_SQLITE_WORD.format(
            fts=MEMORIES.fts_table, table=MEMORIES.name, share=f"{COMMON_SHARE:.6f}"
        )
        counts = ", ".join([one] * len(words))
        cur.execute(
            f"SELECT (SELECT coalesce(max(id), 0) FROM ledger_agentmemory), {counts}".replace("%s", mark),
            [f'{{content tag_index}} : "{word}"' for word in words],
        )
        cur.fetchall()
    query = pg_any(kept, task_pieces(task)) if engine == "postgresql" else fts5_any(kept)
    me = (project_id, key)
    cur.execute(
        RELEVANT_MEMORY_SQL[engine].replace("%s", mark),
        (*me, project_id, project_id, query, project_id, expiry, limit),
    )
    cur.fetchall()
    cur.execute(
        RELEVANT_EPISODE_SQL[engine].replace("%s", mark), (*me, query, project_id, RELEVANT_CANDIDATES)
    )
    cur.fetchall()
    cur.execute(RELEVANT_DECISION_SQL[engine].replace("%s", mark), (query, project_id, RELEVANT_CANDIDATES))
    cur.fetchall()


def floor_connection():
    """The bare driver's connection under Django's; on PostgreSQL its statements are prepared the first
    time they run, as the compiler's are (`DATABASE_PREPARED_STATEMENTS`)."""
    from django.db import connection

    connection.ensure_connection()
    raw = connection.connection
    if connection.vendor == "postgresql" and connection.settings_dict["OPTIONS"].get("server_side_binding"):
        raw.prepare_threshold = 0
    return raw


def task_scenario(engine: str, project, picks: list[tuple[int, str, str]]) -> None:
    """Compiles with a task against the floor of the same queries run raw."""
    from django.db import connection
    from django.utils import timezone

    from ledger import context, word_stats
    from ledger.relevance import task_words
    from tests.relevance.memories import TASKS

    rng = random.Random(13)
    tasks = [rng.choice(TASKS).text for _ in picks]
    for (_, _, name), task in list(zip(picks, tasks, strict=True))[:20]:  # warm caches
        context.compile(project, name, task=task)
    timed, sizes, decided = [], [], []
    for (_, _, name), task in zip(picks, tasks, strict=True):
        t = time.perf_counter()
        result = context.compile(project, name, task=task)
        timed.append((time.perf_counter() - t) * 1000)
        assert result.text is not None and result.error is None, result.error
        sizes.append(len(result.relevant.order))
        decided.append(len(result.relevant.decisions or []))

    raw = floor_connection()
    expiry = connection.ops.adapt_datetimefield_value(timezone.now())
    floor = []
    for (agent_id, key, _), task in zip(picks, tasks, strict=True):
        # The words the compiler keeps (the common ones left out); the floor repeats the SQL that chose them.
        with connection.cursor() as cursor:
            kept = word_stats.kept_words(cursor, engine, task_words(task))
        t = time.perf_counter()
        floor_compile(raw, engine, project.pk, agent_id, key, 20, 4000)
        floor_relevant(
            raw,
            engine,
            project.pk,
            key,
            task,
            task_words(task),
            kept,
            expiry,
            context.RELEVANT_CANDIDATES + 20,
        )
        floor.append((time.perf_counter() - t) * 1000)

    median, floor_median = statistics.median(timed), statistics.median(floor)
    print(
        f"{engine}: task      median {median:.2f} ms  p95 {percentile(timed, 95):.2f} ms  "
        f"({len(picks)} compiles with a task, {statistics.mean(sizes):.1f} relevant rows on average, "
        f"{statistics.mean(decided):.1f} of them decisions)"
    )
    print(
        f"{engine}: floor     median {floor_median:.2f} ms  p95 {percentile(floor, 95):.2f} ms  "
        "(the same queries, bare driver)"
    )
    print(f"{engine}: ratio     {median / floor_median:.2f}x the floor")


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], [("--compiles", {"type": int, "default": COMPILES})])
    engine = setup_django(args.database_url, "compile")
    from django.db import connection

    from ledger import context
    from ledger.models import Agent, Decision

    started = time.perf_counter()
    project = seed()
    if engine == "postgresql":
        with connection.cursor() as cursor:  # what autovacuum does on a live database
            cursor.execute("ANALYZE")
    active = Decision.objects.filter(project=project, status="active").count()
    print(
        f"{engine}: seeded {MEMORIES} memories, {DECISIONS} decisions ({active} active), {SESSIONS} "
        f"sessions in {time.perf_counter() - started:.1f} s"
    )
    agents = list(Agent.objects.filter(project=project).values_list("id", "key", "name"))
    rng = random.Random(11)
    picks = [rng.choice(agents) for _ in range(args.compiles)]

    for _, _, name in picks[:20]:  # warm caches
        context.compile(project, name)
    orm = []
    for _, _, name in picks:
        t = time.perf_counter()
        result = context.compile(project, name)
        orm.append((time.perf_counter() - t) * 1000)
        assert result.text is not None and result.error is None

    raw = floor_connection()
    floor = []
    for agent_id, key, _ in picks:
        t = time.perf_counter()
        floor_compile(raw, engine, project.pk, agent_id, key, 20, 4000)
        floor.append((time.perf_counter() - t) * 1000)

    orm_median, floor_median = statistics.median(orm), statistics.median(floor)
    print(
        f"{engine}: compile   median {orm_median:.2f} ms  p95 {percentile(orm, 95):.2f} ms  "
        f"({args.compiles} compiles)"
    )
    print(
        f"{engine}: floor     median {floor_median:.2f} ms  p95 {percentile(floor, 95):.2f} ms  (bare driver)"
    )
    print(f"{engine}: ratio     {orm_median / floor_median:.2f}x the floor")
    task_scenario(engine, project, picks)


if __name__ == "__main__":
    main()
