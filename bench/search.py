"""Full-text search latency (`q`) on a large ledger.

    python bench/search.py                      # SQLite (temporary file)
    python bench/search.py --database-url postgres://postgres@127.0.0.1:5432/postgres

Seeds 100,000 memories over 50 agents (sentences drawn from a vocabulary of a few hundred words, common
words often and rare ones seldom, the way notes read), 5,000 decisions and 5,000 inbox entries, then
times the memory search the API and the dashboard run (`MemoryFilter` over the rows a caller may see:
the count and the first page of 50) for one-, two- and three-word queries and a prefix being typed,
as a coordinator and as an agent; then the one search across the ledger (`ledger.finder.find`, as
`GET /search` and the MCP tool `search` run it: the best 20 hits of every kind with their excerpts)
with the same queries. Prints p50 and p95 per kind of query, and the decision and inbox lists searched
the same way.
"""

from __future__ import annotations

import random
import time
from datetime import timedelta

from _setup import memory_row, parse_args, percentile, setup_django

AGENTS = 50
MEMORIES = 100_000
DECISIONS = 5_000
ENTRIES = 5_000
RUNS = 200
PAGE = 50


def _phrases(text: str) -> list[str]:
    return text.split("|")


SUBJECTS = _phrases(
    "the deploy script|the payment webhook|the cache layer|the retry queue|the schema migration|"
    "the login page|the search index|the billing job|the export worker|the rate limiter|"
    "the session store|the invoice email|the feature flag|the test suite|the staging database|"
    "the API gateway|the audit log|"
    "the token budget|the review queue|the backup cron|PostgreSQL|SQLite|Redis|the CI pipeline|Stripe"
)
VERBS = _phrases(
    "fails|times out|retries|breaks|needs|slows down|locks|duplicates|drops|rejects|caches|logs|"
    "rotates|migrates|compresses|validates|throttles|replays|flushes|indexes"
)
OBJECTS = _phrases(
    "on Mondays|when the connection pool is exhausted|after a release|under load|for large accounts|"
    "without an idempotency key|when two workers race|if the clock drifts|during the nightly backup|"
    "for unicode names like Zoë and Ångström|when the disk is full|behind the proxy|in the EU region|"
    "with stale credentials|because of a missing index|after the schema change|on the first request|"
    "when the queue backs up|in dry-run mode|for archived rows"
)
ADVICE = _phrases(
    "Check the logs first.|Add a regression test.|Use exponential backoff.|Pin the version.|"
    "Ask the coordinator before changing it.|Document it in the README.|Prefer a transaction.|"
    "Keep the batch small.|Measure before optimising.|Run the migration twice locally.|"
    "Never retry a non-idempotent call.|Read the runbook.|Prefer UTC everywhere.|Alert on p95, not mean."
)
TAGS = "ops db billing ui security perf api ci".split()  # noqa: SIM905

QUERIES = {
    "one word (common)": ["cache", "deploy", "retry", "migration", "webhook", "index"],
    "one word (rare)": ["ångström", "idempotency", "credentials", "runbook", "compresses", "proxy"],
    "prefix": ["postg", "idemp", "throt", "migra", "webh", "ret"],
    "two words": ["payment webhook", "cache layer", "retry queue", "schema migration", "disk full"],
    "three words": [
        "payment webhook retries",
        "deploy script fails",
        "search index backup",
        "rate limiter load",
        "session store locks",
    ],
}


def sentence(rng: random.Random) -> str:
    parts = [f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}."]
    for _ in range(rng.randint(0, 3)):
        parts.append(rng.choice(ADVICE))
    text = " ".join(parts)
    return text[0].upper() + text[1:]


def seed() -> object:
    from django.db import connection
    from django.utils import timezone

    from ledger import services
    from ledger.models import Agent, AgentMemory, Decision, InboxEntry

    rng = random.Random(7)
    project, _ = services.project_create_or_update(slug="bench", name="Bench")
    agents = Agent.objects.bulk_create(
        [Agent(project=project, key=f"agent-{i}", name=f"Agent-{i}") for i in range(AGENTS)]
    )
    start = timezone.now() - timedelta(days=365)
    rows = []
    for i in range(MEMORIES):
        tags = rng.sample(TAGS, rng.randint(0, 2)) + (["cross-team"] if rng.random() < 0.05 else [])
        rows.append(
            memory_row(
                project=project,
                agent=rng.choice(agents),
                type=rng.choice(["core_context", "learning", "pattern", "update"]),
                importance=rng.choice(["high", "medium", "low"]),
                content=" ".join(sentence(rng) for _ in range(rng.randint(1, 3))),
                tags=tags,
                status="archived" if rng.random() < 0.1 else "active",
                created_at=start + timedelta(seconds=i * 300),
            )
        )
    AgentMemory.objects.bulk_create(rows, batch_size=2000)
    Decision.objects.bulk_create(
        [
            Decision(
                project=project,
                agent=rng.choice(agents),
                type=rng.choice(["architectural", "scope", "process", "technical"]),
                title=sentence(rng)[:120],
                content=" ".join(sentence(rng) for _ in range(3)),
                rationale=sentence(rng),
                created_at=start + timedelta(minutes=i),
            )
            for i in range(DECISIONS)
        ],
        batch_size=1000,
    )
    InboxEntry.objects.bulk_create(
        [
            InboxEntry(
                project=project,
                agent=rng.choice(agents),
                slug=f"entry-{i}",
                type=rng.choice(["technical", "learning", "scope", "pattern"]),
                title=sentence(rng)[:120],
                content=" ".join(sentence(rng) for _ in range(2)),
                rationale=sentence(rng),
                created_at=start + timedelta(minutes=i),
            )
            for i in range(ENTRIES)
        ],
        batch_size=1000,
    )
    # The planner's statistics, as autovacuum would gather them after a load this size.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE" if connection.vendor == "postgresql" else "PRAGMA optimize")
    return project


def timed(filterset: type, rows: object, params: dict[str, str]) -> tuple[float, int]:
    """One search as a list runs it: the count, then the first page. Milliseconds and the total."""
    t = time.perf_counter()
    found = filterset(params, queryset=rows)
    assert found.is_valid(), found.errors
    total = found.qs.count()
    list(found.qs[:PAGE])
    return (time.perf_counter() - t) * 1000, total


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], [("--runs", {"type": int, "default": RUNS})])
    engine = setup_django(args.database_url, "search")
    from ledger import visibility
    from ledger.filters import DecisionFilter, InboxFilter, MemoryFilter
    from ledger.models import Agent, Decision, InboxEntry

    started = time.perf_counter()
    project = seed()
    print(
        f"{engine}: seeded {MEMORIES} memories, {DECISIONS} decisions, {ENTRIES} inbox entries in "
        f"{time.perf_counter() - started:.1f} s"
    )
    agent = Agent.objects.get(project=project, key="agent-0")
    rng = random.Random(11)
    for who, viewer in (("coordinator", None), ("agent", agent)):
        rows = visibility.memories_visible_to(project, viewer).order_by("-created_at", "-id")
        for q in QUERIES["one word (common)"]:  # warm caches
            timed(MemoryFilter, rows, {"q": q})
        for kind, queries in QUERIES.items():
            times, totals = [], []
            for _ in range(args.runs):
                ms, total = timed(MemoryFilter, rows, {"q": rng.choice(queries)})
                times.append(ms)
                totals.append(total)
            print(
                f"{engine}: memory {who:<11} {kind:<18} p50 {percentile(times, 50):7.2f} ms  "
                f"p95 {percentile(times, 95):7.2f} ms  (median {percentile(totals, 50):.0f} matches)"
            )
    # One search across the ledger (`GET /search`, the MCP tool `search`): decisions, memories,
    # summaries, episodes and, for a coordinator, inbox entries, the first 20 hits with their excerpts.
    from ledger import finder

    for who, name, coordinator in (("coordinator", None, True), ("agent", agent.name, False)):
        finder.find(project, agent_name=name, coordinator=coordinator, q="cache")  # warm caches
        for kind, queries in QUERIES.items():
            times = []
            for _ in range(args.runs):
                t = time.perf_counter()
                finder.find(project, agent_name=name, coordinator=coordinator, q=rng.choice(queries))
                times.append((time.perf_counter() - t) * 1000)
            print(
                f"{engine}: ledger {who:<11} {kind:<18} p50 {percentile(times, 50):7.2f} ms  "
                f"p95 {percentile(times, 95):7.2f} ms"
            )
    newest = ("-created_at", "-id")
    lists = (
        ("decisions", DecisionFilter, Decision.objects.filter(project=project).order_by(*newest)),
        ("inbox", InboxFilter, InboxEntry.objects.filter(project=project).order_by(*newest)),
    )
    for name, filterset, base in lists:
        times = []
        for _ in range(args.runs):
            kind = rng.choice(list(QUERIES))
            ms, _ = timed(filterset, base, {"q": rng.choice(QUERIES[kind]), "status": "all"})
            times.append(ms)
        print(
            f"{engine}: {name:<9} any query          p50 {percentile(times, 50):7.2f} ms  "
            f"p95 {percentile(times, 95):7.2f} ms"
        )


if __name__ == "__main__":
    main()
