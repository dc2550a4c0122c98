"""Realistic Squad team folders on disk, for tests that adopt a team's existing `.squad/` folder.

Everything written here is made up: the teams, the projects, the people and the text. The shapes follow
the files real Squad teams keep: a decision log written by people and by Squad's Scribe, one history and
one charter per agent, an identity file with front matter, an inbox of proposals, and the files Canon
must never touch (team.md, routing.md, ceremonies.md, config.json, log/, orchestration-log/).

`write_squad_team`'s defaults write the census mix; its `log`, `histories`, `odd_bytes` and `history_kb`
options write the further shapes people and Squad's own code produce (rules and code inside decision
bodies, day sections, `squad_decide` and `squad memory write` files that `squad nap` appended, dated and
cast histories, control characters, a byte-order mark, CRLF, odd Unicode, long files). `FIXTURES` names
one team folder in each shape and `write_fixture` writes it.

Output is deterministic: the same arguments and the same `seed` give the same bytes.
"""

from __future__ import annotations

import json
import random
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, TypeVar

__all__ = [
    "DAY_SHAPES",
    "FIXTURES",
    "HISTORY_STYLES",
    "INBOX_SHAPES",
    "LOG_STYLES",
    "RICH_SHAPES",
    "SHAPES",
    "SQUAD_SHAPES",
    "SquadTeam",
    "assert_lines_kept",
    "crlf",
    "lines_of",
    "person_adds_bullet",
    "scribe_append",
    "scribe_merge_inbox",
    "write_fixture",
    "write_squad_team",
]

# Block shapes of decisions.md, as counted in SquadTeam.shape_counts:
#   dated      `### 2026-03-02T14:05:11Z: Title` (or a bare date), then **By:** / **Status:** / **What:** / **Why:**
#   pacific    `### 2026-02-27 PT — Juno: topic`, then **Date:** / **Author:** / **Status:**, `## Decision`, `## Why`
#   directive  `### 2026-02-20: User directive`, then **By:** user (via Copilot) / **What:** / **Why:**
#   decision   `# Decision: Title`, then **Author:** / **Date:** / **Status:**, `## Context` / `## Rationale`
SHAPES = ("dated", "pacific", "directive", "decision")

# decisions.md styles (write_squad_team's `log`) and history.md styles (`histories`); see write_squad_team.
LOG_STYLES = ("scribe", "rich", "day-sections", "squad-written")
HISTORY_STYLES = ("census", "dated", "casting", "squad-init")

# Inbox shapes, in the order of the census table; two files of each are written.
INBOX_SHAPES = ("decision", "agent-topic", "plain-fields", "directive", "dated-heading", "sections-only")


_T = TypeVar("_T")

# --------------------------------------------------------------------------------------------------
# The record returned to tests


@dataclass
class SquadTeam:
    """What `write_squad_team` wrote. The Scribe helpers change the disk, never this record."""

    root: Path
    folder: Path
    agents: list[str]
    decision_blocks: int
    inbox_files: list[str]
    files: dict[str, bytes]
    layout: str = ".squad"
    newest_first: bool = True
    separators: str = "mixed"
    shape_counts: dict[str, int] = field(default_factory=dict)
    titles: list[str] = field(default_factory=list)
    log: str = "scribe"
    histories: str = "census"

    @property
    def decisions_path(self) -> Path:
        return self.folder / "decisions.md"

    @property
    def archive_path(self) -> Path:
        return self.folder / "decisions-archive.md"

    def history_path(self, agent: str) -> Path:
        return self.folder / "agents" / agent / "history.md"

    def inbox_path(self, name: str) -> Path:
        return self.folder / "decisions" / "inbox" / Path(name).name

    def key(self, path: Path) -> str:
        """The `files` key of a path under root."""
        return path.relative_to(self.root).as_posix()

    def original(self, path: Path) -> bytes:
        """The bytes first written to `path`."""
        return self.files[self.key(path)]


# --------------------------------------------------------------------------------------------------
# Made-up teams and text


@dataclass(frozen=True)
class _Project:
    name: str
    tagline: str
    stack: str
    repo: str
    components: tuple[str, ...]
    focus: str
    issues: tuple[str, ...]


_PROJECTS = (
    _Project(
        name="Lanternfish",
        tagline="a shift planner for community kitchens",
        stack="Python 3.12, Django, PostgreSQL 16, HTMX",
        repo="lanternfish-kitchens/lanternfish",
        components=(
            "shift planner",
            "rota exporter",
            "volunteer portal",
            "SMS gateway",
            "allergen catalogue",
            "nightly report job",
            "sign-in service",
            "admin console",
        ),
        focus="Allergen labels on printed rotas",
        issues=(
            "#41 flaky rota export test",
            "#44 SMS retries double-send on timeout",
            "#52 allergen import rejects accented names",
        ),
    ),
    _Project(
        name="Quarrystone",
        tagline="stock and order tracking for stonemasons' yards",
        stack="TypeScript, pnpm workspace, Node 22, SQLite at the edge",
        repo="quarrystone/yard",
        components=(
            "order service",
            "yard map",
            "stock ledger",
            "quote builder",
            "label printer bridge",
            "sync worker",
            "pricing engine",
            "customer portal",
        ),
        focus="Offline mode for the yard tablets",
        issues=(
            "#41 flaky upload test on the sync worker",
            "#47 quote totals off by a penny",
            "#58 label printer bridge drops jobs after sleep",
        ),
    ),
    _Project(
        name="Harrowgate",
        tagline="field notes and sample tracking for soil surveyors",
        stack="Kotlin, Ktor, Jetpack Compose, PostgreSQL with PostGIS",
        repo="harrowgate/field",
        components=(
            "sample tracker",
            "field notebook",
            "map tiles service",
            "lab results importer",
            "upload queue",
            "photo store",
            "survey planner",
            "export service",
        ),
        focus="Lab results import for the spring survey season",
        issues=(
            "#41 flaky photo upload test",
            "#49 map tiles blank at zoom 17",
            "#55 lab CSV dates parsed as US format",
        ),
    ),
)

# (folder, role). Squad teams usually carry a Scribe agent too.
_AGENT_POOL = (
    ("marlow", "Backend"),
    ("juno", "UI"),
    ("kestrel", "Lead"),
    ("wren", "Tester"),
    ("tamsin", "DevOps"),
    ("orrin", "Data"),
    ("sable", "Security"),
    ("pike", "Mobile"),
    ("linnet", "Docs"),
    ("corvo", "Platform"),
    ("hollis", "Frontend"),
    ("brisa", "Accessibility"),
    ("quill", "API Design"),
    ("ember", "Performance"),
    ("dace", "Integrations"),
    ("fenna", "Design Systems"),
    ("rook", "Release"),
    ("iskra", "Observability"),
    ("odile", "Localisation"),
    ("scribe", "Scribe"),
    ("bram", "Search"),
    ("lark", "QA"),
    ("nyx", "Infra"),
    ("calla", "Product Analytics"),
)

_HUMANS_PLAIN = (("Ilse Varga", "Product"), ("Rowan Achebe", "Eng Manager"), ("Mae Lindqvist", "Support"))
_HUMANS_ACCENTED = (
    ("Zoë Ackermann", "Design"),
    ("Søren Østergaard", "Ops"),
    ("Amélie Laurent-Dubois", "Product"),
    ("Łucja Wrona", "Data"),
    ("José Muñoz", "Support"),
    ("Tomás Ó Briain", "Eng Manager"),
)
# Hebrew and Arabic names, written with escapes so the source stays plain.
_HUMANS_RTL = (
    ("\u05e0\u05d5\u05e2\u05d4 \u05d1\u05df\u05be\u05d3\u05d5\u05d3", "Product"),
    ("\u0644\u064a\u0644\u0649 \u062d\u062f\u0627\u062f", "Research"),
)
_RTL_PHRASE = "\u05e9\u05dd \u05d4\u05de\u05ea\u05e0\u05d3\u05d1"  # "volunteer name" in Hebrew

# (title, what, why); {c} and {c2} are components of the project.
_TOPICS = (
    (
        "Queue {c} jobs in PostgreSQL, not Redis",
        "Background jobs for the {c} are rows claimed with SELECT … FOR UPDATE SKIP LOCKED.",
        "One database to back up; the load is a few jobs a minute.",
    ),
    (
        "Retry {c} calls with capped, jittered backoff",
        "Calls from the {c} retry at most five times, doubling from 200 ms with up to 500 ms of jitter.",
        "Clients retrying on the same second knocked the gateway over twice in February.",
    ),
    (
        "Keep {c} timestamps in UTC end to end",
        "The {c} stores, sends and logs UTC; only the browser converts to local time.",
        "Daylight-saving changes produced duplicate shifts in the autumn.",
    ),
    (
        "Freeze the {c} contract at v2",
        "No field is removed or renamed in the {c} v2 payloads; additions need a default.",
        "The web and mobile teams are building against it this quarter.",
    ),
    (
        "Log {c} errors as structured JSON",
        "Every error from the {c} is one JSON object per line with `event`, `level` and `trace_id`.",
        "Grepping free text across three services wasted most of the last incident.",
    ),
    (
        "Put the new {c} behaviour behind a per-team flag",
        "The rewrite ships dark; each team opts in from the admin screen.",
        "Two pilot teams asked for it; the rest asked us not to change anything before the season.",
    ),
    (
        "Drop the legacy CSV import in the {c}",
        "The CSV path is removed; the JSON import covers every column it had.",
        "It had no tests and broke on every spreadsheet export from a new locale.",
    ),
    (
        "Cache {c} lookups for sixty seconds",
        "Reads of the {c} go through a 60-second in-process cache keyed by tenant.",
        "Profiles showed the same lookup forty times per page.",
    ),
    (
        "Version {c} payloads with an explicit schema field",
        "Each payload carries `schema: <int>`; readers reject versions they do not know.",
        "Silent shape changes broke the {c2} twice.",
    ),
    (
        "Run {c} tests against a real database",
        "The {c} test suite uses a throwaway PostgreSQL, not SQLite and not mocks.",
        "Three bugs last month only showed up with real locking.",
    ),
    (
        "Use UUIDv7 keys in the {c}",
        "New tables in the {c} use time-ordered UUIDv7 primary keys.",
        "Sequential integers leaked record counts to customers; random UUIDs fragmented the indexes.",
    ),
    (
        "Rate-limit the {c} per API token",
        "The {c} allows 120 requests a minute per token and answers 429 with `Retry-After`.",
        "One misconfigured script took the service down for everyone.",
    ),
    (
        "Keep {c} secrets in the vault, never in the repository",
        "Credentials for the {c} are read from the vault at start-up; `.env` files hold names only.",
        "A token was pushed to a fork in January and had to be rotated at night.",
    ),
    (
        "Render {c} pages on the server",
        "The {c} renders HTML on the server and adds behaviour with small scripts.",
        "The single-page build tripled the bundle and broke on the older tablets.",
    ),
    (
        "Require two reviewers for {c} schema changes",
        "A migration that touches the {c} needs its owner's approval and one other reviewer.",
        "A dropped column took a week of backfill to undo.",
    ),
    (
        "Paginate {c} lists with cursors, not offsets",
        "List endpoints in the {c} return an opaque `next` cursor; `page=` is gone.",
        "Offsets skipped rows when records were inserted during a scroll.",
    ),
    (
        "Keep the {c} stateless",
        "The {c} holds nothing between requests; sessions live in the database.",
        "We want two copies behind the load balancer without sticky sessions.",
    ),
    (
        "Soft-delete {c} records for thirty days",
        "Deleting in the {c} sets `deleted_at`; a nightly job purges rows older than thirty days.",
        "Support restored data by hand four times last quarter.",
    ),
    (
        "Make {c} imports idempotent",
        "Imports into the {c} are keyed by the source file's checksum and row number.",
        "Re-running a failed import created duplicates.",
    ),
    (
        "Emit {c} metrics in OpenMetrics format",
        "The {c} exposes `/metrics`; counters end in `_total`, durations are histograms in seconds.",
        "The old push gateway lost samples whenever it restarted.",
    ),
    (
        "Gate {c} deploys on the smoke suite",
        "A deploy of the {c} waits for the twelve smoke tests against staging to pass.",
        "Two broken releases reached users on a Friday.",
    ),
    (
        "Replace polling in the {c} with webhooks",
        "The {c} subscribes to upstream webhooks and polls only as a fallback every fifteen minutes.",
        "Polling every ten seconds used most of our API quota.",
    ),
    (
        "Cap {c} request bodies at 1 MB",
        "The {c} rejects bodies over 1 MB with 413 and a message that says where large files go.",
        "One oversized upload exhausted memory on the smallest instance.",
    ),
    (
        "Generate {c} fixtures from the schema",
        "Test fixtures for the {c} are generated from the JSON schema, never edited by hand.",
        "Hand-edited fixtures drifted from production shapes within weeks.",
    ),
    (
        "Translate {c} strings through one catalogue",
        "User-facing text in the {c} goes through the message catalogue; no literals in templates.",
        "The Portuguese and Hebrew releases each found dozens of untranslated strings.",
    ),
    (
        "Back up the {c} database nightly and test restores monthly",
        "Nightly base backups with WAL archiving; on the first Monday of each month someone restores one.",
        "Nobody had ever restored a backup, and the first try failed.",
    ),
    (
        "Time out {c} requests after five seconds",
        "Outbound calls from the {c} have a five-second deadline, passed on in a header.",
        "A hung upstream held every worker for minutes.",
    ),
    (
        "Document every {c} endpoint before merge",
        "A pull request that adds an endpoint to the {c} includes its entry in the API reference.",
        "The reference was three releases behind.",
    ),
    (
        "Batch {c} notifications every ten minutes",
        "The {c} groups notifications per recipient and sends one digest every ten minutes.",
        "Volunteers muted the app after thirty messages in an hour.",
    ),
    (
        "Keep {c} vendor SDKs behind an adapter",
        "The {c} calls vendor SDKs only through one adapter module with our own types.",
        "Two SDK upgrades changed return types under us.",
    ),
    (
        "Accept right-to-left text in {c} names",
        "Names in the {c} are stored as typed, rendered with `dir=auto`, and never reversed or trimmed.",
        "Hebrew and Arabic names were shown backwards in exports.",
    ),
    (
        "Normalise {c} input to NFC",
        "The {c} normalises text to NFC at the boundary and compares names case-folded.",
        "`Zoë` typed on two keyboards produced two different customers.",
    ),
    (
        "Pin the {c} SDK to a minor version",
        "The SDK is pinned with `~=` to the current minor; upgrades get their own pull request.",
        "A patch release changed pagination defaults and broke the nightly sync.",
    ),
    (
        "Split the {c} into read and write paths",
        "Writes go through command handlers; reads use a denormalised view refreshed on commit.",
        "Reporting queries were locking the tables the writers needed.",
    ),
    (
        "Move {c} configuration out of environment variables",
        "Configuration for the {c} lives in a checked-in TOML file; the environment holds secrets only.",
        "Thirty variables per service were impossible to review.",
    ),
    (
        "One migration per pull request in the {c}",
        "A pull request that changes the {c} schema contains exactly one migration.",
        "Squashed migrations hid a destructive step in review.",
    ),
    (
        "Serve {c} assets with immutable cache headers",
        "Hashed assets from the {c} are served with `Cache-Control: public, max-age=31536000, immutable`.",
        "Tablets on the site Wi-Fi downloaded the bundle again on every visit.",
    ),
    (
        "Encrypt {c} exports at rest",
        "Exports from the {c} are written encrypted with the tenant's key and expire after seven days.",
        "Exports hold personal data and were sitting in a shared bucket.",
    ),
    (
        "Own the {c} pager per squad",
        "The squad that owns the {c} carries its pager; the platform team is second line only.",
        "Pages went to people who had never seen the code.",
    ),
    (
        "Write the changelog entry with the {c} change",
        "Every user-visible change to the {c} adds a line under `Unreleased` in the same pull request.",
        "Release notes were rebuilt from commit messages and missed half the changes.",
    ),
)

_DIRECTIVES = (
    ("Never force-push to main.", "Lost work twice."),
    (
        "Ask before adding a new runtime dependency.",
        "Every dependency is a licence review and a feed to watch.",
    ),
    (
        "Keep pull requests under 400 changed lines unless the code is generated.",
        "Large pull requests sat unreviewed for days.",
    ),
    (
        "Don't touch the billing code without a person on the review.",
        "It is the one place a bug costs money.",
    ),
    ("Write a failing test first for every bug fix.", "Three regressions came back after being fixed."),
    ("Use British spelling in user-facing text.", "Our customers are in the UK and Ireland."),
    ("Stop opening issues for lint warnings; fix them in place.", "The tracker filled with noise."),
    ("Run the full suite before asking for review.", "Reviewers kept finding failures CI would have caught."),
    ("Prefer boring technology; justify anything new in a decision entry.", "The team is small."),
    ("Never delete a decision entry; mark it Superseded instead.", "People link to entries from tickets."),
    ("Commit generated files in their own commit.", "Mixed commits were impossible to review."),
    ("Keep main deployable at all times.", "We ship whenever a fix is ready, sometimes twice a day."),
)

_DIRECTIVE_INDEXES = tuple(str(i) for i in range(len(_DIRECTIVES)))

_CONTEXT = (
    "The {c} grew from one endpoint to eleven in a quarter, and nobody could say which ones the mobile client still calls.",
    "Last sprint's incident review traced two of the three pages back to the {c}.",
    "We inherited the {c} from the pilot, where nobody expected more than one customer.",
    "Support tickets about the {c} doubled after the January release.",
    "The {c} and the {c2} disagree about who owns the customer record.",
    "A load test at five times today's traffic showed the {c} falling over first.",
    "New joiners keep asking why the {c} works the way it does; the answer was only in chat.",
    "The vendor behind the {c} announced the end of its current API for June.",
)

_RATIONALE = (
    "It is the smallest change that removes the failure we actually saw.",
    "Everyone on the team already knows how to operate it.",
    "It can be undone in one deploy if the numbers go the wrong way.",
    "It keeps the {c} testable without a network.",
    "The cost is a few milliseconds per request, which nobody will notice.",
    "It matches what the {c2} already does, so there is one pattern to learn.",
    "The alternative needs a new service someone would have to run at night.",
)

_CONSEQUENCES = (
    "The {c} dashboard gains a panel for the new metric.",
    "Old clients keep working until the end of the quarter.",
    "The runbook for the {c} needs a new section.",
    "We accept slightly slower writes.",
    "Two tests that relied on the old behaviour are rewritten, not deleted.",
    "The {c2} team hears about it in the weekly sync.",
    "Nothing changes for people using the admin screens.",
)

_OPTIONS = (
    ("Keep the current setup", "none", "fails again at the next peak"),
    ("Managed queue service", "£40/month", "one more vendor, one more outage page"),
    ("Redis streams", "one new server", "nobody on call knows Redis"),
    ("Hand-written retries", "a day", "every caller does it differently"),
    ("Do it in the {c2}", "two weeks", "wrong owner; that team is full"),
    ("Third-party SDK", "licence review", "closed source, slow to patch"),
    ("Cron job", "an hour", "no retries, no visibility"),
)

_CODE = (
    (
        "sql",
        (
            "SELECT id, payload",
            "FROM jobs",
            "WHERE run_after <= now()",
            "ORDER BY run_after",
            "FOR UPDATE SKIP LOCKED",
            "LIMIT 10;",
        ),
    ),
    (
        "python",
        (
            "def backoff(attempt: int) -> float:",
            "    base = min(0.2 * 2**attempt, 10.0)",
            "    return base + random.uniform(0, 0.5)",
        ),
    ),
    (
        "bash",
        (
            "# rotate the key before the deploy window",
            "./scripts/rotate-key --service {slug}",
            "make smoke ENV=staging",
        ),
    ),
    ("yaml", ("retries:", "  max: 5", "  base_ms: 200", "  jitter_ms: 500")),
    (
        "json",
        (
            "{",
            '  "schema": 2,',
            '  "kind": "{slug}.updated",',
            '  "id": "0190f6a2-7c1e-7b3a-9f00-2c5e8d1b4a77"',
            "}",
        ),
    ),
    (
        "typescript",
        (
            "export function isStale(at: Date, now = new Date()): boolean {",
            "  return now.getTime() - at.getTime() > 60_000;",
            "}",
        ),
    ),
    ("toml", ("[{slug}]", 'timeout = "5s"', "max_body = 1_048_576")),
)

_EMOJI_LINES = (
    "✅ Rolled out to every tenant.",
    "⚠️ Breaks clients older than 2.3.",
    "🚀 Shipped in 1.14.",
    "👩‍💻 Pairing session booked for the follow-up.",
    "🔒 Security review done.",
    "🧪 Covered by the smoke suite.",
)
_TITLE_EMOJI = ("🚀", "✅", "🔒", "🧭")

_STATUSES = {
    "dated": ("Active", "Active", "Accepted", "Implemented", "Superseded", "Applied (partial)", "Proposed"),
    "pacific": ("Adopted", "Accepted", "Proposed", "Implemented"),
    "directive": ("", "", "Active directive"),
    "decision": ("Proposed", "Accepted", "Implemented", "Superseded", "Adopted"),
}
_SHAPE_WEIGHTS = (45, 18, 10, 27)
_FLAG_ODDS = (
    ("table", 0.10),
    ("nested", 0.12),
    ("code", 0.10),
    ("emoji", 0.12),
    ("long", 0.08),
    ("accent", 0.10),
    ("rtl", 0.04),
    ("type", 0.25),
)
_TYPES = ("architectural", "architectural", "architectural", "process", "technical")

# Every decisions.md holds each of these at least once: (shape, status, flags).
_REQUIRED: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("dated", "Active", ("type",)),
    ("dated", "Implemented", ("table",)),
    ("dated", "Applied (partial)", ("nested",)),
    ("dated", "Superseded", ("long", "accent")),
    ("dated", "Accepted", ("code", "emoji")),
    ("dated", "Proposed", ()),
    ("pacific", "Adopted", ("code", "emoji")),
    ("pacific", "Proposed", ("table",)),
    ("directive", "Active directive", ("rtl",)),
    ("directive", "", ()),
    ("decision", "Proposed", ("trap",)),
    ("decision", "Accepted", ("accent", "nested")),
    ("decision", "Superseded", ("long",)),
)

_LEARNINGS = (
    (
        "Retries need jitter",
        "Three clients retrying on the same second overloaded the gateway; add up to 500 ms of jitter.",
    ),
    ("Fixtures drift", "Regenerate fixtures from the schema, never edit them by hand."),
    (
        "Locks show up only on a real database",
        "SQLite let two workers claim the same job; PostgreSQL with SKIP LOCKED does not.",
    ),
    (
        "The {c} caches per tenant",
        "Clearing the cache for one tenant must not clear it for all; the key starts with the tenant id.",
    ),
    ("Time zones", "Store UTC and convert at the edge. The tablets are set to local time and lie about it."),
    (
        "Exports are read by spreadsheets",
        "Put a BOM on CSV exports or accented names break in older spreadsheet apps.",
    ),
    ("Small pull requests merge", "Anything over 400 lines waits days for review; split by layer."),
    (
        "The {c} has two owners on paper",
        "Ask the lead before changing anything in it; the routing table is out of date.",
    ),
    ("Names are not ASCII", "Test with `Zoë`, `Łucja` and a right-to-left name every time a form changes."),
    ("Logs need trace ids", "Without `trace_id` the logs of the three services cannot be joined."),
    ("Feature flags rot", "Every flag gets an owner and a removal date in the same pull request."),
    ("Staging is not production", "Staging has one worker; concurrency bugs hide there."),
    ("Idempotency keys", "Clients send `Idempotency-Key`; the {c} keeps them for 24 hours."),
    (
        "Migrations and deploys",
        "Deploy code that tolerates both schemas first, migrate second, clean up third.",
    ),
    ("Webhook order", "Webhooks arrive out of order; compare the `sequence` field, not the arrival time."),
    ("Printing is slow", "A label takes two seconds to print; queue the job and never block the request."),
    ("Docs next to code", "The runbook for the {c} lives in the repository; the wiki copy is stale."),
    ("Flaky tests hide real bugs", "Quarantine a flaky test with an issue link; never delete it."),
    ("Config typos", "Unknown keys in the config file now fail start-up instead of being ignored."),
    ("Pagination", "Cursor pagination broke the page-number widget in the {c2}; it uses 'load more' now."),
    ("Read the decision log first", "Half of my questions this week were already answered in decisions.md."),
    ("Clock skew", "The {c} rejected tokens from a laptop two minutes fast; allow 30 seconds of leeway."),
)

_BULLETS = (
    "`make check` runs lint, types and tests in one go.",
    "The {c} reads its config once at start-up; restart it after a change.",
    "Staging data is refreshed every Monday at 06:00 UTC.",
    "The smoke suite needs the `SMOKE_TOKEN` secret, which only CI has.",
    "Use `--dry-run` before any import into production.",
    "Error messages are user-facing; keep them short and say what to do next.",
    "The {c2} team reviews anything that touches shared types.",
    "Long queries get `statement_timeout = 5s` from the pool.",
    "The {c} logs at INFO in production; DEBUG only behind the support flag.",
    "Screenshots in bug reports come from the tablets, which run an older browser.",
    "`git bisect` found the {c} regression in nine steps; keep commits small.",
    "The {c} has no retries of its own; callers own them.",
)

_CONTINUATIONS = (
    "See the runbook section on recovery for the exact commands.",
    "This bit us in the January incident.",
    "Confirmed on the review with the lead.",
    "The {c2} works the same way.",
    "Numbers from last week's load test are in the perf notes.",
)

_UPDATES = (
    "Contract for the {c} frozen at v2; the web team builds on it.",
    "Took over the {c} from {other}.",
    "Smoke suite green on staging after the {c} rewrite.",
    "Paired with {other} on the {c2} migration.",
    "Released 1.{n} with the {c} fixes.",
    "Decisions about the {c} merged into the log.",
    "Closed the last open bug in the {c} backlog.",
    "Wrote the runbook page for the {c2}.",
)

_OPEN_QUESTIONS = (
    "Do we still need the CSV path in the {c}?",
    "Who owns the {c} dashboard after the reorg?",
    "Is five seconds the right timeout for the {c2}?",
    "Should the {c} move to the shared auth library?",
    "Can the nightly job run during the day once the load drops?",
)

_HARD_RULES = (
    "the {c} never writes to the {c2} database directly.",
    "no change to the {c} ships without a smoke run.",
    "secrets never appear in logs, not even truncated.",
    "every public function in the {c} has a test.",
    "nothing in the {c} depends on the time zone of the server.",
)


# --------------------------------------------------------------------------------------------------
# Small helpers


def _fill(text: str, c: str = "", c2: str = "", other: str = "", n: int = 0) -> str:
    return (
        text.replace("{c}", c)
        .replace("{c2}", c2)
        .replace("{slug}", _slug(c))
        .replace("{other}", other)
        .replace("{n}", str(n))
    )


def _slug(text: str, words: int = 6) -> str:
    parts = re.sub(r"[^a-z0-9]+", " ", text.lower()).split()
    return "-".join(parts[:words])


def _paragraphs(chunks: list[list[str]]) -> list[str]:
    """Joins chunks of lines with one blank line between them."""
    out: list[str] = []
    for chunk in chunks:
        if not chunk:
            continue
        if out:
            out.append("")
        out.extend(chunk)
    return out


def _compact(chunks: list[list[str]]) -> list[str]:
    """Like `_paragraphs`, but with no blank line next to a heading chunk."""
    out: list[str] = []
    previous_heading = True
    for chunk in chunks:
        heading = chunk[0].startswith("#")
        if out and not heading and not previous_heading:
            out.append("")
        out.extend(chunk)
        previous_heading = heading
    return out


def _pacific(when: datetime) -> datetime:
    """`when` in US Pacific time (second Sunday of March to first Sunday of November is daylight time)."""
    march = datetime(when.year, 3, 8, 10, tzinfo=UTC)
    march += timedelta(days=(6 - march.weekday()) % 7)
    november = datetime(when.year, 11, 1, 9, tzinfo=UTC)
    november += timedelta(days=(6 - november.weekday()) % 7)
    hours = -7 if march <= when < november else -8
    return when.astimezone(timezone(timedelta(hours=hours)))


def _iso_z(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BLOCK_HEADING = re.compile(r"^(#{1,3} \d{4}-\d{2}-\d{2}|#{1,3} Decision:)")
_HEADING = re.compile(r"^(#{1,6}) +(.*?)\s*$")


def _split_keepends(text: str) -> list[str]:
    """Lines with their endings; only "\\n" ends a line (a "\\r" before it stays on the line)."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def _outside_fences(lines: list[str]) -> list[bool]:
    """For each line, True when it is outside fenced code (fence lines themselves count as inside)."""
    result: list[bool] = []
    fence = ""
    for line in lines:
        bare = line.rstrip("\r\n")
        match = _FENCE.match(bare)
        if fence:
            result.append(False)
            closing = match is not None and bare.strip() == match.group(1)
            if closing and match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = ""
        elif match:
            fence = match.group(1)
            result.append(False)
        else:
            result.append(True)
    return result


def _newline_of(text: str) -> str:
    return "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"


def _write(root: Path, files: dict[str, bytes], relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    path.write_bytes(data)
    files[relative] = data


# --------------------------------------------------------------------------------------------------
# Generator


@dataclass(frozen=True)
class _Agent:
    folder: str
    name: str
    role: str


@dataclass
class _Block:
    shape: str
    title: str
    head: Callable[[datetime], list[str]]
    body: list[str]

    def lines(self, when: datetime) -> list[str]:
        return self.head(when) + self.body


@dataclass
class _Topic:
    title: str
    what: str
    why: str
    c: str
    c2: str


class _Gen:
    def __init__(self, rng: random.Random, project: _Project, agents: list[_Agent]) -> None:
        self.rng = rng
        self.project = project
        self.agents = agents
        self._round = 0
        self._topics: list[tuple[int, str]] = []
        self._decks: dict[int, list[str]] = {}
        self._piles: dict[int, list[int]] = {}

    # -- pieces ----------------------------------------------------------------------------------

    def component(self, besides: str = "") -> str:
        choices = [c for c in self.project.components if c != besides]
        return self.rng.choice(choices)

    def topic(self) -> _Topic:
        if not self._topics:
            self._round += 1
            self._topics = [(i, c) for i in range(len(_TOPICS)) for c in self.project.components]
            self.rng.shuffle(self._topics)
        index, c = self._topics.pop()
        c2 = self.component(besides=c)
        title, what, why = (_fill(part, c, c2) for part in _TOPICS[index])
        if self._round > 1:
            title = f"{title} (round {self._round})"
        return _Topic(title=title, what=what, why=why, c=c, c2=c2)

    def agent(self, besides: str = "") -> _Agent:
        """An agent other than `besides`; Squad's Scribe only when nobody else is left."""
        choices = [a for a in self.agents if a.folder not in (besides, "scribe")]
        return self.rng.choice(choices or self.agents)

    def deal(self, bank: tuple[str, ...]) -> str:
        """The next line of a shuffled deck of `bank`, so neighbours rarely repeat."""
        deck = self._decks.get(id(bank))
        if not deck:
            deck = list(bank)
            self.rng.shuffle(deck)
            self._decks[id(bank)] = deck
        return deck.pop()

    def pick(self, bank: tuple[_T, ...]) -> _T:
        """The next item of a shuffled deck of `bank` (items of any kind), so neighbours rarely repeat."""
        pile = self._piles.get(id(bank))
        if not pile:
            pile = list(range(len(bank)))
            self.rng.shuffle(pile)
            self._piles[id(bank)] = pile
        return bank[pile.pop()]

    def person(self, flags: tuple[str, ...]) -> tuple[str, str]:
        """(name, role) of a block's author; people with accented or right-to-left names when flagged."""
        if "rtl" in flags:
            return self.rng.choice(_HUMANS_RTL)
        if "accent" in flags:
            return self.rng.choice(_HUMANS_ACCENTED)
        if self.rng.random() < 0.15:
            return self.rng.choice(_HUMANS_PLAIN)
        agent = self.agent()
        return agent.name, agent.role

    def sentence(self, bank: tuple[str, ...], t: _Topic) -> str:
        return _fill(self.rng.choice(bank), t.c, t.c2)

    def long_line(self, t: _Topic) -> str:
        parts = [t.why]
        pool = [*_CONTEXT, *_RATIONALE, *_CONSEQUENCES]
        while len(" ".join(parts)) < 360:
            parts.append(_fill(self.rng.choice(pool), t.c, t.c2))
        return " ".join(parts)

    def table(self, t: _Topic) -> list[str]:
        rows = self.rng.sample(_OPTIONS, self.rng.randint(2, 4))
        out = ["| Option | Cost | Notes |", "|---|---|---|"]
        out += [f"| {_fill(o, t.c, t.c2)} | {cost} | {_fill(n, t.c, t.c2)} |" for o, cost, n in rows]
        out.append("| **The change above** | small | chosen |")
        return out

    def nested(self, t: _Topic) -> list[str]:
        rng = self.rng
        out = ["- Scope:", f"  - the {t.c}", f"  - the {t.c2}, read-only"]
        if rng.random() < 0.6:
            out += ["    - exports only", "    - and the nightly report"]
        out += ["- Out of scope:", "  - the mobile app until 3.0"]
        if rng.random() < 0.5:
            out += [
                "",
                "1. Ship behind the flag.",
                "2. Watch the error rate for a week.",
                "   - roll back above 1%",
            ]
        return out

    def code(self, t: _Topic) -> list[str]:
        lang, lines = self.rng.choice(_CODE)
        return [f"```{lang}", *(_fill(line, t.c, t.c2) for line in lines), "```"]

    def trap(self) -> list[str]:
        return [
            "The entry format, for anyone writing one by hand (keep the fence when copying):",
            "",
            "```markdown",
            "### 2026-01-01: Example entry",
            "**By:** Example (Role)",
            "**What:** One sentence.",
            "",
            "---",
            "",
            "# Decision: not a real decision",
            "```",
        ]

    def extras(self, flags: tuple[str, ...], t: _Topic) -> list[list[str]]:
        chunks: list[list[str]] = []
        if "table" in flags:
            chunks.append(["Options we looked at:", "", *self.table(t)])
        if "nested" in flags:
            chunks.append(self.nested(t))
        if "code" in flags:
            chunks.append(self.code(t))
        if "trap" in flags:
            chunks.append(self.trap())
        if "emoji" in flags:
            chunks.append([self.rng.choice(_EMOJI_LINES)])
        if "rtl" in flags:
            chunks.append([f"The export header now reads «{_RTL_PHRASE}» in the Hebrew locale."])
        return chunks

    # -- decision blocks -------------------------------------------------------------------------

    def random_spec(self) -> tuple[str, str, tuple[str, ...]]:
        rng = self.rng
        shape = rng.choices(SHAPES, weights=_SHAPE_WEIGHTS)[0]
        status = rng.choice(_STATUSES[shape])
        flags = tuple(name for name, odds in _FLAG_ODDS if rng.random() < odds)
        return shape, status, flags

    def block(self, shape: str, status: str, flags: tuple[str, ...]) -> _Block:
        if shape == "dated":
            return self.dated(status, flags)
        if shape == "pacific":
            return self.pacific(status, flags)
        if shape == "directive":
            return self.directive(status, flags)
        return self.decision(status, flags)

    def dated(self, status: str, flags: tuple[str, ...]) -> _Block:
        rng = self.rng
        t = self.topic()
        name, role = self.person(flags)
        title = t.title
        if "emoji" in flags and rng.random() < 0.5:
            title = f"{title} {rng.choice(_TITLE_EMOJI)}"
        with_time = rng.random() < 0.75
        fields: list[str] = []
        if "type" in flags:
            fields.append(f"**Type:** {rng.choice(_TYPES)}")
        if status:
            fields.append(f"**Status:** {status}")
        if rng.random() < 0.15:
            fields += ["**What:**", f"- {t.what}", f"- {self.sentence(_CONSEQUENCES, t)}"]
        else:
            fields.append(f"**What:** {t.what}")
        fields.append(f"**Why:** {self.long_line(t) if 'long' in flags else t.why}")
        body = _paragraphs([fields, *self.extras(flags, t)])

        def head(when: datetime) -> list[str]:
            stamp = _iso_z(when) if with_time else when.strftime("%Y-%m-%d")
            return [f"### {stamp}: {title}", f"**By:** {name} ({role})"]

        return _Block("dated", title, head, body)

    def pacific(self, status: str, flags: tuple[str, ...]) -> _Block:
        rng = self.rng
        t = self.topic()
        name, role = self.person(flags)
        first = name.split()[0]
        topic = t.title[0].lower() + t.title[1:]
        decision = [[t.what], *self.extras(flags, t)]
        why = [[t.why + " " + self.sentence(_RATIONALE, t)]]
        if "long" in flags:
            why.append([self.long_line(t)])
        tail: list[list[str]] = []
        if rng.random() < 0.4:
            count = rng.randint(2, 3)
            bullets = [f"- {_fill(s, t.c, t.c2)}" for s in rng.sample(_CONSEQUENCES, count)]
            tail = [["## Consequences"], bullets]
        body = ["", *_paragraphs([["## Decision"], *decision, ["## Why"], *why, *tail])]
        status_line = f"**Status:** {status or 'Proposed'}"

        def head(when: datetime) -> list[str]:
            local = _pacific(when)
            return [
                f"### {local:%Y-%m-%d} PT — {first}: {topic}",
                "",
                f"**Date:** {local.isoformat()}",
                f"**Author:** {name} ({role})",
                status_line,
            ]

        return _Block("pacific", topic, head, body)

    def directive(self, status: str, flags: tuple[str, ...]) -> _Block:
        rng = self.rng
        what, why = _DIRECTIVES[int(self.deal(_DIRECTIVE_INDEXES))]
        if "rtl" in flags or "accent" in flags:
            who = f"{self.person(flags)[0]} (via Copilot)"
        else:
            who = "user (via Copilot)"
        with_time = rng.random() < 0.3
        fields = [f"**By:** {who}"]
        if status:
            fields.append(f"**Status:** {status}")
        fields += [f"**What:** {what}", f"**Why:** {why}"]
        t = _Topic(title="User directive", what=what, why=why, c=self.component(), c2=self.component())
        body = _paragraphs([fields, *self.extras(tuple(f for f in flags if f == "emoji"), t)])
        if "rtl" in flags:
            body += ["", f"Applies to every locale, «{_RTL_PHRASE}» included."]

        def head(when: datetime) -> list[str]:
            stamp = _iso_z(when) if with_time else when.strftime("%Y-%m-%d")
            return [f"### {stamp}: User directive"]

        return _Block("directive", "User directive", head, body)

    def decision(self, status: str, flags: tuple[str, ...]) -> _Block:
        rng = self.rng
        t = self.topic()
        name, _role = self.person(flags)
        compact = rng.random() < 0.4
        date_first = rng.random() < 0.3
        context = [[self.sentence(_CONTEXT, t)]]
        if "long" in flags:
            context.append([self.long_line(t)])
        chunks: list[list[str]] = [["## Context"], *context, *self.extras(flags, t)]
        if rng.random() < 0.6:
            chunks += [["## Decision"], [t.what]]
        else:
            chunks[1] = [*chunks[1], t.what]
        chunks += [["## Rationale"], [t.why + " " + self.sentence(_RATIONALE, t)]]
        if rng.random() < 0.3:
            chunks += [["## Consequences"], [f"- {self.sentence(_CONSEQUENCES, t)}" for _ in range(2)]]
        body = _compact(chunks) if compact else ["", *_paragraphs(chunks)]
        status_line = f"**Status:** {status}"
        title = t.title

        def head(when: datetime) -> list[str]:
            author = f"**Author:** {name}"
            date = f"**Date:** {when:%Y-%m-%d}"
            fields = [date, author] if date_first else [author, date]
            return [f"# Decision: {title}", *([] if compact else [""]), *fields, status_line]

        return _Block("decision", title, head, body)

    def dates(self, count: int) -> list[datetime]:
        """`count` moments, newest first, ending at the start of March 2026."""
        when = datetime(2026, 3, 5, 17, 42, 8, tzinfo=UTC)
        out = []
        for _ in range(count):
            out.append(when)
            when -= timedelta(seconds=self.rng.randint(3 * 3600, 40 * 3600))
        return out

    def separator_after(self, blocks: list[_Block], mode: str) -> list[bool]:
        """For each gap between blocks, whether a `---` line stands in it."""
        gaps = len(blocks) - 1
        if mode == "never":
            return [False] * max(gaps, 0)
        if mode == "always":
            return [True] * max(gaps, 0)
        out: list[bool] = []
        on = self.rng.random() < 0.5
        left = self.rng.randint(4, 14)
        for i in range(max(gaps, 0)):
            if left == 0:
                on = not on
                left = self.rng.randint(4, 14)
            left -= 1
            # A `# Decision:` block swallows a following `###` block unless a `---` stands between.
            needed = blocks[i].shape == "decision" and blocks[i + 1].shape != "decision"
            out.append(on or needed)
        return out


# --------------------------------------------------------------------------------------------------
# decisions.md


def _decisions(gen: _Gen, *, log_lines: int, newest_first: bool, separators: str) -> tuple[str, list[_Block]]:
    rng = gen.rng
    preamble = ["# Squad Decisions", "", "## Active Decisions", ""]
    if rng.random() < 0.7:
        order = "newest first" if newest_first else "oldest first"
        preamble += [
            f"Decisions the {gen.project.name} team has agreed on, {order}. Scribe merges the inbox here;",
            "people edit entries only to fix typos or to mark them Superseded.",
            "",
        ]
    total = len(preamble)
    estimate = max(len(_REQUIRED), log_lines // 15)
    slots = rng.sample(range(estimate), len(_REQUIRED))
    wanted = dict(zip(slots, _REQUIRED, strict=True))
    last = max(slots)
    probe = datetime(2026, 1, 1, tzinfo=UTC)
    blocks: list[_Block] = []
    while total < log_lines or len(blocks) <= last:
        spec = wanted.get(len(blocks)) or gen.random_spec()
        block = gen.block(*spec)
        blocks.append(block)
        total += len(block.lines(probe)) + 1
    if separators == "never":
        # Without `---`, a `# Decision:` block can only be followed by another one: they sit at the end.
        blocks = [b for b in blocks if b.shape != "decision"] + [b for b in blocks if b.shape == "decision"]
    dates = gen.dates(len(blocks))
    if not newest_first:
        dates.reverse()
    seps = gen.separator_after(blocks, separators)
    parts = ["\n".join(preamble) + "\n"]
    for i, (block, when) in enumerate(zip(blocks, dates, strict=True)):
        parts.append("\n".join(block.lines(when)) + "\n")
        if i < len(seps):
            parts.append("\n---\n\n" if seps[i] else "\n")
    return "".join(parts), blocks


# --------------------------------------------------------------------------------------------------
# agents/{name}/history.md and charter.md


def _history(gen: _Gen, agent: _Agent, size: str, min_bytes: int = 0) -> str:
    """A history in the census shapes; `min_bytes` makes it grow with more learnings to at least that
    many bytes of UTF-8."""
    rng = gen.rng
    p = gen.project
    c = gen.component()
    c2 = gen.component(besides=c)
    other = gen.agent(besides=agent.folder)
    human = rng.choice(_HUMANS_PLAIN + _HUMANS_ACCENTED)[0]
    target = {"short": rng.randint(22, 60), "medium": rng.randint(80, 150), "long": rng.randint(210, 320)}[
        size
    ]

    lines = [
        "# Project Context",
        "",
        f"- **Project:** {p.name} — {p.tagline}.",
        f"- **Stack:** {p.stack}.",
        f"- **Owner:** {human}",
    ]
    if rng.random() < 0.5:
        lines.append(f"- **Repository:** `{p.repo}`")
    lines += [
        "",
        "## Core Context",
        "",
        f"- **My role:** {agent.role}. I own the {c} and the {c2}.",
        f"- **Hard rule:** {_fill(rng.choice(_HARD_RULES), c, c2)}",
        f"- **Works with:** {other.name} ({other.role}).",
    ]
    if rng.random() < 0.5:
        lines.append(f"- **Where things live:** `src/{_slug(c)}/`, tests in `tests/{_slug(c)}/`.")
    lines += ["", "## Recent Updates", ""]
    when = datetime(2026, 3, 4, 16, 0, tzinfo=UTC) - timedelta(hours=rng.randint(0, 72))
    for _ in range(rng.randint(2, 6 if size == "short" else 12)):
        text = _fill(
            gen.deal(_UPDATES),
            gen.component(),
            gen.component(),
            gen.agent(agent.folder).name,
            rng.randint(2, 19),
        )
        if rng.random() < 0.2:
            lines.append(f"📌 Team update ({_iso_z(when)}): {text} — decided by {gen.agent().name}")
        else:
            lines.append(f"📌 {when:%Y-%m-%d} — {text}")
        when -= timedelta(hours=rng.randint(10, 90))
    lines += ["", "## Learnings", ""]

    learnings = list(_LEARNINGS)
    rng.shuffle(learnings)
    subheadings = size != "short" and rng.random() < 0.7
    entry = 0
    spent_whitespace_line = False

    def short() -> bool:
        return len(lines) < target - 6 or (min_bytes > 0 and len("\n".join(lines).encode()) < min_bytes)

    while short():
        comp = gen.component()
        if subheadings and entry % 5 == 0:
            lines += [f"### {comp[0].upper()}{comp[1:]}", ""]
        kind = rng.random()
        if kind < 0.45 and learnings:
            title, text = learnings.pop()
            title = _fill(title, comp, c2)
            text = _fill(text, comp, c2)
            if rng.random() < 0.6:
                lines += [f"**{title}:**", text]
            else:
                lines += [f"**{title}:** {text}"]
            if rng.random() < 0.3:
                lines.append(_fill(gen.deal(_CONTINUATIONS), comp, c2))
        else:
            for _ in range(rng.randint(1, 4)):
                lines.append(f"- {_fill(gen.deal(_BULLETS), comp, c2)}")
                if rng.random() < 0.35:
                    lines.append(f"  {_fill(gen.deal(_CONTINUATIONS), comp, c2)}")
                    if size == "long" and not spent_whitespace_line:
                        # A whitespace-only line inside a bullet, followed by more indented text.
                        lines += ["  ", "  Written down after the second time it happened."]
                        spent_whitespace_line = True
            if size != "short" and rng.random() < 0.08:
                lines += ["", "```bash", "# reproduce locally", f"make run SERVICE={_slug(comp)}", "```"]
        lines.append("")
        entry += 1
        if not learnings and short():
            learnings = list(_LEARNINGS)
            rng.shuffle(learnings)
    if size != "short" or rng.random() < 0.3:
        lines += ["## Open Questions", ""]
        lines += [f"- {_fill(q, c, c2)}" for q in rng.sample(_OPEN_QUESTIONS, rng.randint(1, 3))]
        lines.append("")
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"


def _charter(gen: _Gen, agent: _Agent) -> str:
    rng = gen.rng
    c = gen.component()
    c2 = gen.component(besides=c)
    return "\n".join(
        [
            f"# {agent.name} — {agent.role}",
            "",
            f"> Keeps the {c} boring, in the best sense.",
            "",
            "## Identity",
            "",
            f"- **Name:** {agent.name}",
            f"- **Role:** {agent.role}",
            f"- **Style:** {rng.choice(['Terse', 'Patient', 'Thorough', 'Direct'])}; asks before guessing.",
            "",
            "## What I Own",
            "",
            f"- The {c}",
            f"- Reviews that touch the {c2}",
            "",
            "## How I Work",
            "",
            "- Read `decisions.md` before starting any task.",
            "- Write a decision to the inbox when a choice affects anyone else.",
            "- Record what I learn in my history.",
            "",
            "## Boundaries",
            "",
            f"**I handle:** {agent.role.lower()} work on the {c}.",
            f"**I don't handle:** anything in the {c2} without its owner.",
            "",
        ]
    )


# --------------------------------------------------------------------------------------------------
# Inbox and the files Canon must never touch


def _inbox(gen: _Gen) -> list[tuple[str, str]]:
    """(file name, text) for two inbox files of each shape."""
    rng = gen.rng
    when = datetime(2026, 3, 6, 9, 14, 27, tzinfo=UTC)
    out: list[tuple[str, str]] = []
    # How each file states its reasons, in INBOX_SHAPES order, two per shape.
    why_styles = {
        "decision": ("## Rationale", "## Rationale"),
        "agent-topic": ("**Why:**", "## Why"),
        "plain-fields": ("## Rationale", ""),
        "directive": ("**Why:**", "**Why:**"),
        "dated-heading": ("", "**Rationale:**"),
        "sections-only": ("## Why", ""),
    }
    used: set[str] = set()
    for shape in INBOX_SHAPES:
        for style in why_styles[shape]:
            when += timedelta(seconds=rng.randint(2 * 3600, 20 * 3600))
            t = gen.topic()
            agent = gen.agent()
            human = rng.choice(_HUMANS_PLAIN + _HUMANS_ACCENTED)[0]
            reason = f"{t.why} {gen.sentence(_RATIONALE, t)}"
            lines: list[str]
            if shape == "directive":
                what, why = rng.choice(_DIRECTIVES)
                name = f"copilot-directive-{when:%Y%m%dT%H%M%SZ}.md"
                lines = [
                    f"### {_iso_z(when)}: User directive",
                    f"**By:** {human} (via Copilot)",
                    f"**What:** {what}",
                    f"**Why:** {why}",
                    "",
                    "Captured from the session so the team remembers it.",
                ]
            else:
                name = f"{agent.folder}-{_slug(t.title, 4)}.md"
                if shape == "decision":
                    lines = [
                        f"# Decision: {t.title}",
                        "",
                        f"**Author:** {agent.name}",
                        f"**Date:** {when:%Y-%m-%d}",
                        "**Status:** Proposed",
                        "",
                        "## Context",
                        "",
                        gen.sentence(_CONTEXT, t),
                        "",
                        "## Decision",
                        "",
                        t.what,
                    ]
                elif shape == "agent-topic":
                    topic = t.title[0].lower() + t.title[1:]
                    lines = [
                        f"# {agent.name} — {topic}",
                        "",
                        f"**Date:** {when:%Y-%m-%d}",
                        f"**Status:** {rng.choice(['Proposed', 'Proposed', 'Draft'])}",
                        "",
                        t.what,
                    ]
                    if rng.random() < 0.5:
                        lines += ["", *gen.nested(t)]
                elif shape == "plain-fields":
                    lines = [
                        f"# {t.title}",
                        "",
                        f"Date: {when:%Y-%m-%d}",
                        f"Owner: {agent.name}",
                        f"Requested by: {human}",
                        "",
                        t.what,
                        "",
                        gen.sentence(_CONTEXT, t),
                    ]
                elif shape == "dated-heading":
                    lines = [f"### {when:%Y-%m-%d}: {t.title}", "", t.what, "", gen.sentence(_CONTEXT, t)]
                else:  # sections-only
                    lines = ["## Context", "", gen.sentence(_CONTEXT, t), "", "## Proposal", "", t.what]
                if style.startswith("## "):
                    lines += ["", style, "", reason]
                elif style:
                    lines += ["", f"{style} {reason}"]
            while name in used:
                name = name.removesuffix(".md") + "-2.md"
            used.add(name)
            out.append((name, "\n".join(lines) + "\n"))
    return out


def _now(gen: _Gen) -> str:
    p = gen.project
    issues = [p.issues[0], *gen.rng.sample(p.issues[1:], 2)]
    c = gen.component()
    return "\n".join(
        [
            "---",
            "updated_at: 2026-03-05T18:10:00Z",
            f"focus_area: {p.focus}",
            "active_issues:",
            *(f'  - "{issue}"' for issue in issues),
            "---",
            "",
            "# What We're Focused On",
            "",
            f"{p.focus}. The {c} work lands first; everything else waits for the release after.",
            "",
            "## This Week",
            "",
            f"- Finish the {c} changes and get them through the smoke suite.",
            f"- Close {issues[0].split()[0]} before anything new starts.",
            "- Keep the inbox empty: merge or reject every proposal by Friday.",
            "",
        ]
    )


def _team_md(gen: _Gen) -> str:
    p = gen.project
    rows = [f"| {a.name} | {a.role} | `agents/{a.folder}/charter.md` | ✅ Active |" for a in gen.agents]
    humans = [f"| {name} | {role} |" for name, role in (_HUMANS_PLAIN + _HUMANS_ACCENTED[:2])]
    return "\n".join(
        [
            f"# {p.name} Team",
            "",
            f"> {p.tagline[0].upper()}{p.tagline[1:]}.",
            "",
            "## Members",
            "",
            "| Name | Role | Charter | Status |",
            "|------|------|---------|--------|",
            *rows,
            "",
            "## People",
            "",
            "| Name | Role |",
            "|------|------|",
            *humans,
            "",
            "## Project Context",
            "",
            f"- **Stack:** {p.stack}",
            f"- **Repository:** `{p.repo}`",
            "",
        ]
    )


def _routing_md(gen: _Gen) -> str:
    rows = []
    for component in gen.project.components:
        agent = gen.agent()
        rows.append(f"| {component} | {agent.name} | changes, bugs and reviews in the {component} |")
    return "\n".join(
        [
            "# Work Routing",
            "",
            "How work is routed to team members.",
            "",
            "| Work type | Route to | Examples |",
            "|-----------|----------|----------|",
            *rows,
            "| Session logging | Scribe | automatic, never needs routing |",
            "",
            "## Rules",
            "",
            "1. Route to the owner first; fall back to the lead.",
            "2. Anything touching two areas goes to both owners.",
            "",
        ]
    )


def _ceremonies_md(gen: _Gen) -> str:
    lead = gen.agent().name
    return "\n".join(
        [
            "# Ceremonies",
            "",
            "## Design Review",
            "",
            "| Field | Value |",
            "|-------|-------|",
            "| **Trigger** | auto |",
            "| **When** | before |",
            "| **Condition** | multi-agent task touching shared code |",
            f"| **Facilitator** | {lead} |",
            "| **Participants** | all relevant |",
            "| **Enabled** | ✅ yes |",
            "",
            "## Retrospective",
            "",
            "| Field | Value |",
            "|-------|-------|",
            "| **Trigger** | auto |",
            "| **When** | after |",
            "| **Condition** | build failure or test failure |",
            f"| **Facilitator** | {lead} |",
            "| **Enabled** | ✅ yes |",
            "",
        ]
    )


def _logs(gen: _Gen) -> list[tuple[str, str]]:
    rng = gen.rng
    out: list[tuple[str, str]] = []
    when = datetime(2026, 3, 1, 10, 12, 0, tzinfo=UTC)
    for _ in range(3):
        t = gen.topic()
        a, b = gen.agent(), gen.agent()
        name = f"log/{when:%Y-%m-%d}-{_slug(t.title, 3)}.md"
        text = "\n".join(
            [
                f"# Session log — {when:%Y-%m-%d}",
                "",
                f"**Requested by:** {rng.choice(_HUMANS_PLAIN)[0]}",
                "",
                "## Who worked",
                "",
                f"- {a.name} ({a.role})",
                f"- {b.name} ({b.role})",
                "",
                "## What was done",
                "",
                f"- {t.what}",
                "",
                "## Decisions",
                "",
                f"- {t.title} (in the inbox)",
                "",
            ]
        )
        out.append((name, text))
        when += timedelta(hours=rng.randint(20, 40))
    for _ in range(4):
        agent = gen.agent()
        t = gen.topic()
        name = f"orchestration-log/{when:%Y-%m-%dT%H-%M-%SZ}-{agent.folder}.md"
        text = "\n".join(
            [
                f"### {_iso_z(when)} — {agent.name}",
                "",
                "| Field | Value |",
                "|-------|-------|",
                f"| **Agent routed** | {agent.name} ({agent.role}) |",
                f"| **Why chosen** | owns the {t.c} |",
                f"| **Mode** | {rng.choice(['background', 'sync'])} |",
                f"| **Files authorized to read** | `src/{_slug(t.c)}/` |",
                f"| **Outcome** | {t.what} |",
                "",
            ]
        )
        out.append((name, text))
        when += timedelta(minutes=rng.randint(5, 300))
    return out


def _config_json(gen: _Gen) -> str:
    data = {
        "version": 1,
        "team": gen.project.name,
        "models": {"default": "standard", "scribe": "fast"},
        "inbox": {"path": "decisions/inbox", "mergeOnSessionEnd": True},
        "agents": [a.folder for a in gen.agents],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------------------------------
# decisions.md in further shapes: rich bodies, day sections, and what Squad's own code writes

_OPTION_AREAS = (
    "Release process",
    "Job queue",
    "Search backend",
    "Offline storage",
    "Label printing",
    "Error tracking",
    "Feature flags",
    "Image hosting",
)

# (what, old version, new version)
_BUMPS = (
    ("SDK", "0.9.2", "0.9.4"),
    ("Node", "20.18.1", "22.11.0"),
    ("pnpm", "8.15.9", "9.12.3"),
    ("PostgreSQL", "15.8", "16.4"),
    ("Kotlin", "1.9.24", "2.0.21"),
    ("Playwright", "1.45.0", "1.48.2"),
    ("Ktor", "2.3.12", "3.0.1"),
    ("Django", "5.1.9", "5.2.3"),
)
_BUMP_REASONS = (
    "{old} retries forever on a 503; {new} caps the retries at five.",
    "A security advisory covers {old}; {new} is the first fixed release.",
    "{new} is the long-term support line, and {old} leaves support in April.",
    "{new} fixes the memory leak the {c} hit under load.",
)

# (opening fence, lines, closing fence): fenced code whose lines start with `#`.
_HASH_CODE = (
    (
        "```bash",
        (
            "# Run before every deploy of the {c}.",
            "./scripts/check-migrations --service {slug}",
            "## two hashes: still a comment, not a heading",
            "make smoke ENV=staging",
        ),
        "```",
    ),
    (
        "```markdown",
        (
            "## Decision",
            "",
            "### 2026-01-01: How an entry starts",
            "**By:** Name (Role)",
            "",
            "---",
            "",
            "# Decision: not one of ours",
        ),
        "```",
    ),
    (
        "```python",
        (
            "# Keep the jitter below the retry interval.",
            "def delay(attempt: int) -> float:",
            "    # capped at ten seconds",
            "    return min(0.2 * 2**attempt, 10.0) + random.uniform(0, 0.5)",
        ),
        "```",
    ),
    ("~~~yaml", ("# retries for the {c}", "retries:", "  max: 5  # then give up", "  base_ms: 200"), "~~~"),
    (
        "````text",
        ("### not a heading: four backticks hold three", "```", "# Decision: still inside", "```"),
        "````",
    ),
)
_CHECKLIST = (
    "Flag created in the admin screen",
    "Pilot teams opted in",
    "Runbook updated",
    "Dashboard panel added",
    "Old path removed",
    "Announcement posted in the weekly sync",
)
_LATER = (
    "**Update ({d}):** rolled out to every tenant; the error rate stayed flat.",
    "**Update ({d}):** the {c2} team asked for a week's delay, granted; nothing else changes.",
    "_Follow-up, {d}:_ measured after a week, p95 went from 840 ms to 310 ms.",
    "**Update ({d}):** one customer relied on the old behaviour; they have a month to move.",
)
_REFERENCES = ("#41", "PR #58", "docs/adr/0007-job-queue.md", "#44, #52", "the January incident review")
_GOVERNANCE = (
    "- A choice that changes how someone else works goes through the inbox.",
    "- The Scribe merges the inbox; nobody rewrites a merged entry, it is superseded instead.",
    "- Keep each entry short: what, why, who.",
)

# Block shapes of `log="rich"`, as counted in SquadTeam.shape_counts:
#   options      `### 2026-03-01 — Release process: option (a)` (a colon in the title, no author part),
#                an options table, a `---` rule, then `## Decision` and `## Consequences`
#   bump         `### 2026-03-01: Bump SDK: 0.9.4`, a **What:** list, **Why:**
#   code         fenced code holding `#` lines (shell comments, markdown headings, `# Decision:`)
#   sections     **Author:** / **Date:** / **Status:**, `## Context`, `## Decision`, `### Details`, `## Rationale`
#   update       fields, then a `---` or `***` rule and a later **Update (date):** paragraph
#   hard-breaks  `## Title` with no date, `**Date:** 2026-02  ` fields ending in two spaces
#   checklist    `- [x]` tasks and a `> **Note:**` quote
RICH_SHAPES = ("options", "bump", "code", "sections", "update", "hard-breaks", "checklist")
# Decisions inside the day sections of `log="day-sections"` (`## 2026-06-08`, no date of their own):
#   fields (**By:** / **What:** / **Why:**), paragraph, bold-decision (**Decision:** / **Rationale:**), list
DAY_SHAPES = ("fields", "paragraph", "bold-decision", "list")
# What `log="squad-written"` holds: squad-decide blocks (`### 2026-11-26T11-04-35: Queue jobs`, merged by the
# Scribe or appended by `squad nap`) and memory-write files appended by nap with their front matter.
SQUAD_SHAPES = ("squad-decide", "memory-write")


def _rich_block(gen: _Gen, shape: str) -> _Block:
    """A dated decision block whose body holds what people put in one (RICH_SHAPES)."""
    rng = gen.rng
    t = gen.topic()
    name, role = gen.person(("accent",) if rng.random() < 0.1 else ())
    by = f"**By:** {name} ({role})"
    status = rng.choice(("Adopted", "Accepted", "Active", "Implemented"))
    if shape == "options":
        area = gen.pick(_OPTION_AREAS)
        letters = "abc"[: rng.randint(2, 3)]
        chosen = rng.choice(letters)
        title = f"{area}: option ({chosen})"
        options = {
            letter: (_fill(option, t.c, t.c2), cost, _fill(notes, t.c, t.c2))
            for letter, (option, cost, notes) in zip(letters, rng.sample(_OPTIONS, len(letters)), strict=True)
        }
        table = ["| Option | What it means | Cost |", "|---|---|---|"]
        table += [f"| ({letter}) | {option} | {cost} |" for letter, (option, cost, _notes) in options.items()]
        against = [f"({letter}) {notes}" for letter, (_o, _c, notes) in options.items() if letter != chosen]
        consequences = [f"- {_fill(line, t.c, t.c2)}" for line in rng.sample(_CONSEQUENCES, 2)]
        body = _paragraphs(
            [
                [by, f"**Status:** {status}"],
                ["## Options"],
                table,
                ["---"],
                ["## Decision"],
                [f"Option ({chosen}): {options[chosen][0]}. {gen.sentence(_RATIONALE, t)}"],
                [f"Against the others: {'; '.join(against)}."],
                ["## Consequences"],
                consequences,
            ]
        )
        return _Block(shape, title, lambda when: [f"### {when:%Y-%m-%d} — {title}"], body)
    if shape == "bump":
        thing, old, new = gen.pick(_BUMPS)
        title = f"Bump {thing}: {new}"
        reason = _fill(rng.choice(_BUMP_REASONS), t.c, t.c2).replace("{old}", old).replace("{new}", new)
        body = [
            by,
            "**What:**",
            f"- Bump {thing} from {old} to {new}.",
            "- Regenerate the lockfile in the same pull request.",
            f"**Why:** {reason}",
        ]
        return _Block(shape, title, lambda when: [f"### {when:%Y-%m-%d}: {title}"], body)
    if shape == "code":
        opener, code, closer = gen.pick(_HASH_CODE)
        fenced = [opener, *(_fill(line, t.c, t.c2) for line in code), closer]
        body = _paragraphs([[by, f"**Status:** {status}"], [t.what], fenced, [f"**Why:** {t.why}"]])
        return _Block(shape, t.title, lambda when: [f"### {_iso_z(when)}: {t.title}"], body)
    if shape == "sections":
        details = [f"- {_fill(line, t.c, t.c2)}" for line in rng.sample(_CONSEQUENCES, rng.randint(2, 3))]
        rationale = f"{t.why} {gen.sentence(_RATIONALE, t)}"
        chunks = [
            ["## Context"],
            [gen.sentence(_CONTEXT, t)],
            ["## Decision"],
            [t.what],
            ["### Details"],
            details,
        ]
        body = ["", *_paragraphs([*chunks, ["## Rationale"], [rationale]])]

        def sections_head(when: datetime) -> list[str]:
            day = f"{when:%Y-%m-%d}"
            return [
                f"### {day}: {t.title}",
                "",
                f"**Author:** {name}",
                f"**Date:** {day}",
                f"**Status:** {status}",
            ]

        return _Block(shape, t.title, sections_head, body)
    if shape == "update":
        rule = rng.choice(("---", "***"))
        later = _fill(rng.choice(_LATER), t.c, t.c2)
        gap = timedelta(days=rng.randint(2, 9))
        fields = [by, f"**What:** {t.what}", f"**Why:** {t.why}"]

        def update_lines(when: datetime) -> list[str]:
            note = later.replace("{d}", f"{when + gap:%Y-%m-%d}")
            return [f"### {_iso_z(when)}: {t.title}", *fields, "", rule, "", note]

        return _Block(shape, t.title, update_lines, [])
    if shape == "hard-breaks":

        def hard_breaks(when: datetime) -> list[str]:
            return [
                f"## {t.title}",
                "",
                f"**Date:** {when:%Y-%m}  ",
                f"**By:** {name}  ",
                "",
                f"**Decision:** {t.what}",
                "",
                f"**Rationale:** {t.why}",
            ]

        return _Block(shape, t.title, hard_breaks, [])
    done = rng.randint(1, 3)
    tasks = [f"- [{'x' if i < done else ' '}] {item}" for i, item in enumerate(rng.sample(_CHECKLIST, 4))]
    body = _paragraphs(
        [
            [by, "**Status:** Implemented"],
            [t.what],
            ["Rollout:", *tasks],
            [f"> **Note:** {gen.sentence(_CONSEQUENCES, t)}"],
        ]
    )
    return _Block(shape, t.title, lambda when: [f"### {when:%Y-%m-%d}: {t.title}"], body)


def _rich_log(
    gen: _Gen, *, log_lines: int, newest_first: bool, separators: str
) -> tuple[str, list[tuple[str, str]]]:
    """A decisions.md of dated blocks with rich bodies, every RICH_SHAPE at least once; (text, [(shape,
    title)])."""
    rng = gen.rng
    preamble = [
        "# Squad Decisions",
        "",
        "## Active Decisions",
        "",
        f"What the {gen.project.name} team decided, written by whoever decided it.",
        "",
    ]
    first = list(RICH_SHAPES)
    rng.shuffle(first)
    probe = datetime(2026, 1, 1, tzinfo=UTC)
    blocks: list[_Block] = []
    total = len(preamble)
    while total < log_lines or len(blocks) < len(first):
        shape = first[len(blocks)] if len(blocks) < len(first) else rng.choice(RICH_SHAPES)
        block = _rich_block(gen, shape)
        blocks.append(block)
        total += len(block.lines(probe)) + 2
    dates = gen.dates(len(blocks))
    if not newest_first:
        dates.reverse()
    seps = gen.separator_after(blocks, separators)
    parts = ["\n".join(preamble) + "\n"]
    for i, (block, when) in enumerate(zip(blocks, dates, strict=True)):
        parts.append("\n".join(block.lines(when)) + "\n")
        if i < len(seps):
            parts.append("\n---\n\n" if seps[i] else "\n")
    return "".join(parts), [(b.shape, b.title) for b in blocks]


def _day_decision(gen: _Gen, shape: str) -> tuple[str, list[str]]:
    """(title, lines) of one undated decision inside a day section (DAY_SHAPES)."""
    rng = gen.rng
    t = gen.topic()
    name, role = gen.person(())
    if shape == "fields":
        return t.title, [
            f"### {t.title}",
            f"**By:** {name} ({role})",
            f"**What:** {t.what}",
            f"**Why:** {t.why}",
        ]
    if shape == "paragraph":
        lines = [f"### {t.title}", "", t.what]
        if rng.random() < 0.5:
            lines += ["", f"{t.why} {gen.sentence(_RATIONALE, t)}"]
        return t.title, lines
    if shape == "bold-decision":
        return t.title, [
            f"### {t.title}",
            "",
            f"**Decision:** {t.what}",
            f"**Rationale:** {t.why}",
            f"**Owner:** {name}",
        ]
    return t.title, [
        f"### {t.title}",
        "",
        f"- {t.what}",
        f"- {gen.sentence(_CONSEQUENCES, t)}",
        f"- Decided by {name}.",
    ]


def _day_sections_log(gen: _Gen) -> tuple[str, list[tuple[str, str]]]:
    """A decisions.md grouped by day: `## 2026-06-08` and its undated `###` decisions (twenty in the first
    day), newest day first, sometimes with `---` between days; (text, [(shape, title)])."""
    rng = gen.rng
    lines = [
        "# Squad Decisions",
        "",
        f"The {gen.project.name} team's decisions, one section a day, newest first.",
        "",
    ]
    day = datetime(2026, 6, 8, tzinfo=UTC)
    made: list[tuple[str, str]] = []
    ruled = rng.random() < 0.5
    counts = [20, *(rng.randint(2, 7) for _ in range(rng.randint(3, 5)))]
    for k, count in enumerate(counts):
        if k and ruled:
            lines += ["---", ""]
        lines += [f"## {day:%Y-%m-%d}", ""]
        for _ in range(count):
            shape = DAY_SHAPES[len(made)] if len(made) < len(DAY_SHAPES) else rng.choice(DAY_SHAPES)
            title, decision = _day_decision(gen, shape)
            lines += [*decision, ""]
            made.append((shape, title))
        day -= timedelta(days=rng.randint(1, 3))
    return "\n".join(lines).rstrip("\n") + "\n", made


def _squad_stamp(when: datetime) -> str:
    """A time as squad_decide writes it in a heading: ISO, ':' and '.' as '-', 19 characters."""
    return when.strftime("%Y-%m-%dT%H-%M-%S")


def _squad_decide(gen: _Gen, when: datetime) -> tuple[str, str, str]:
    """(file name, title, text) of a file `squad_decide` writes: no blank lines, no final newline."""
    rng = gen.rng
    t = gen.topic()
    agent = gen.agent()
    lines = [f"### {_squad_stamp(when)}: {t.title}", f"**By:** {agent.name}", f"**What:** {t.what}"]
    if rng.random() < 0.5:
        lines.append(f"**References:** {rng.choice(_REFERENCES)}")
    lines.append(f"**Why:** {t.why}")
    return f"{agent.folder}-{_slug(t.title, 5)}.md", t.title, "\n".join(lines)


def _memory_write(gen: _Gen, when: datetime) -> tuple[str, str, str]:
    """(file name, title, text) of a file `squad memory write --class DECISION` writes: front matter, then
    the body."""
    rng = gen.rng
    t = gen.topic()
    agent = gen.agent()
    ident = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    title = json.dumps(t.title, ensure_ascii=False) if ":" in t.title else t.title
    created = f"{when:%Y-%m-%dT%H:%M:%S}.{rng.randint(0, 999):03d}Z"
    front = [
        "---",
        f"id: {ident}",
        "class: DECISION",
        "loadGuidance: [ALWAYS]",
        f"title: {title}",
        f"author: {agent.folder}",
        f"createdAt: {created}",
        "metadata: {}",
        "---",
    ]
    body = rng.choice(
        (
            [t.what, "", f"Why: {t.why}"],
            ["## Decision", "", t.what, "", "## Why", "", t.why],
            [f"{t.what} {t.why}"],
        )
    )
    name = f"{agent.folder}-{_slug(t.title, 5)}-{ident[:8]}.md"
    return name, t.title, "\n".join(front + body) + "\n"


def _archived_block(gen: _Gen, when: datetime) -> str:
    """A block written by hand months ago, in the archive `squad nap` fills."""
    t = gen.topic()
    name, role = gen.person(())
    return "\n".join(
        [
            f"### {when:%Y-%m-%d}: {t.title}",
            f"**By:** {name} ({role})",
            "**Status:** Active",
            "",
            f"**What:** {t.what}",
            f"**Why:** {t.why}",
        ]
    )


def _squad_written(gen: _Gen) -> tuple[str, str, list[tuple[str, str]], list[tuple[str, str]]]:
    """The decision log, its archive and the inbox as Squad's own code leaves them; (decisions.md,
    decisions-archive.md, [(shape, title)] of the log, [(inbox file name, text)]).

    The log is `squad init`'s, then squad_decide blocks the Scribe merged (one blank line between), then
    inbox files `squad nap` appended verbatim ("\\n" + text without trailing white space + "\\n"), a
    memory-write file's front matter included. The archive holds `###` entries nap moved out."""
    rng = gen.rng
    archive = ["# Decisions Archive", "", "Entries moved out of decisions.md after thirty days.", ""]
    when = datetime(2026, 8, 20, 9, 5, 12, tzinfo=UTC)
    for _ in range(rng.randint(15, 25)):
        if rng.random() < 0.5:
            archive += [_squad_decide(gen, when)[2], ""]
        else:
            archive += [_archived_block(gen, when), ""]
        when += timedelta(hours=rng.randint(20, 60), seconds=rng.randint(0, 3599))

    log = "\n".join(["# Squad Decisions", "", "## Active Decisions", "", "No decisions recorded yet.", ""])
    log += "\n".join(["", "## Governance", "", *_GOVERNANCE]) + "\n"
    made: list[tuple[str, str]] = []
    when = datetime(2026, 10, 29, 8, 41, 3, tzinfo=UTC)
    for _ in range(rng.randint(40, 55)):
        _name, title, text = _squad_decide(gen, when)
        log += "\n" + text + "\n"
        made.append(("squad-decide", title))
        when += timedelta(hours=rng.randint(3, 12), seconds=rng.randint(0, 3599))
    napped = ["squad-decide", "memory-write", "squad-decide", "memory-write"]
    for shape in napped:
        _name, title, text = (_squad_decide if shape == "squad-decide" else _memory_write)(gen, when)
        log += "\n" + text.rstrip() + "\n"
        made.append((shape, title))
        when += timedelta(hours=rng.randint(2, 30), seconds=rng.randint(0, 3599))

    inbox: list[tuple[str, str]] = []
    for shape in ("squad-decide", "memory-write", "squad-decide", "memory-write"):
        name, _title, text = (_squad_decide if shape == "squad-decide" else _memory_write)(gen, when)
        inbox.append((name, text))
        when += timedelta(hours=rng.randint(1, 9), seconds=rng.randint(0, 3599))
    return log, "\n".join(archive).rstrip("\n") + "\n", made, inbox


# --------------------------------------------------------------------------------------------------
# agents/{name}/history.md in further shapes

# (section title, sentences) of the dated `## Learnings — 2026-06-08: Rate limits` sections.
_DATED_LEARNINGS = (
    (
        "Rate limits",
        (
            "The gateway allows 120 requests a minute per token.",
            "Above that it answers 429 with `Retry-After`; the {c} honours it.",
        ),
    ),
    (
        "Webhook order",
        ("Webhooks arrive out of order.", "Compare the `sequence` field, never the arrival time."),
    ),
    (
        "Print queue",
        (
            "A label takes two seconds to print.",
            "The {c} queues print jobs and never blocks a request on one.",
        ),
    ),
    (
        "Cache keys",
        ("Cache keys in the {c} start with the tenant id.", "Clearing one tenant must never clear another."),
    ),
    ("Time zones", ("The tablets are set to local time.", "Store UTC; convert only in the browser.")),
    (
        "Flaky tests",
        ("The flaky upload test depended on the clock.", "It now freezes time instead of sleeping."),
    ),
)
_AUDITS = (
    ("Crate audit", "All 7 crates pass `cargo deny`."),
    ("Dependency audit", "2 of 41 packages need an upgrade before the release."),
    ("Accessibility sweep", "Every form passes; the map still needs labels."),
    ("Licence check", "No copyleft dependency in the shipped bundle."),
    ("Query review", "Three queries lacked an index; all three are fixed."),
)
_SESSIONS = (
    "Paired with {other} on the {c} migration; the plan is in the runbook.",
    "Agreed with the lead that the {c} ships behind a flag first.",
    "Triaged the {c} backlog: four bugs closed as duplicates, two moved to the {c2}.",
    "Walked a new joiner through the {c} and the decision log.",
)
_MEMORY_DECISIONS = (
    "The {c} stays on the shared database until its load triples.",
    "The {c} owns its migrations; nobody else edits them.",
    "Errors from the {c} go to the shared tracker, tagged with the squad.",
    "The {c2} reads from the {c} only through its public API.",
)
_PATTERNS = (
    "**Small steps:** one behaviour per pull request, flag first, clean-up last.",
    "**Ask the owner:** anything in the {c2} goes past its owner before merge.",
    "**Measure first:** a performance change comes with numbers from before and after.",
    "**Write it down:** a choice made in chat goes to the inbox the same day.",
)
_APPEND_HERE = "<!-- Append learnings below -->"


def _dated_history(gen: _Gen, agent: _Agent, index: int) -> str:
    """A history with dated sections and entries: `## Learnings — D: topic` sections, squad_memory's
    `### D` entries in `## Learnings`, `## Decisions` and `## Context`, a `### D — Audit` entry with a
    `**Verdict:**` paragraph, the append comment, a `## Patterns` section and, at the very end, a Scribe
    `📌 Team update` line. The first agent's history has every one of these."""
    rng = gen.rng
    p = gen.project
    c = gen.component()
    c2 = gen.component(besides=c)
    other = gen.agent(besides=agent.folder).name
    full = index == 0
    human = rng.choice(_HUMANS_PLAIN + _HUMANS_ACCENTED)[0]
    lines = [
        "# Project Context",
        "",
        f"- **Project:** {p.name} — {p.tagline}.",
        f"- **Stack:** {p.stack}.",
        f"- **Owner:** {human}",
        "",
        "## Core Context",
        "",
        f"- **My role:** {agent.role}. I own the {c}.",
        f"- **Hard rule:** {_fill(rng.choice(_HARD_RULES), c, c2)}",
        "",
    ]
    day = datetime(2026, 6, 8, tzinfo=UTC) - timedelta(days=rng.randint(0, 2))
    for title, sentences in rng.sample(_DATED_LEARNINGS, rng.randint(1, 3)):
        said = [_fill(s, c, c2) for s in sentences]
        lines += [f"## Learnings — {day:%Y-%m-%d}: {title}", ""]
        style = rng.random()
        if style < 0.4:
            lines += [f"- {s}" for s in said]
        elif style < 0.7:
            lines += [" ".join(said)]
        else:
            lines += [f"**{title}:** {said[0]}", said[1]]
        lines.append("")
        day -= timedelta(days=rng.randint(1, 4))

    lines += ["## Learnings", "", _APPEND_HERE, ""]
    for j in range(rng.randint(2, 5)):
        if j == 1 or (j > 1 and rng.random() < 0.2):
            audit, verdict = gen.pick(_AUDITS)
            bullets = [f"- {_fill(gen.deal(_BULLETS), c, c2)}" for _ in range(rng.randint(1, 3))]
            lines += [f"### {day:%Y-%m-%d} — {audit}", "", f"**Verdict:** {verdict}", "", *bullets, ""]
        else:
            title, text = rng.choice(_LEARNINGS)
            lines += [f"### {day:%Y-%m-%d}", "", f"{_fill(title, c, c2)}: {_fill(text, c, c2)}", ""]
        day -= timedelta(days=rng.randint(1, 3))
    if full or rng.random() < 0.6:
        lines += ["## Decisions", ""]
        for _ in range(rng.randint(1, 3)):
            lines += [f"### {day:%Y-%m-%d}", "", _fill(rng.choice(_MEMORY_DECISIONS), c, c2), ""]
            day -= timedelta(days=rng.randint(1, 3))
    if full or rng.random() < 0.6:
        lines += ["## Context", ""]
        for _ in range(rng.randint(1, 2)):
            lines += [f"### {day:%Y-%m-%d}", "", _fill(rng.choice(_SESSIONS), c, c2, other), ""]
            day -= timedelta(days=rng.randint(1, 3))
    lines += ["## Patterns", ""]
    lines += [f"- {_fill(pattern, c, c2)}" for pattern in rng.sample(_PATTERNS, rng.randint(1, 3))]
    if full or rng.random() < 0.7:
        t = gen.topic()
        stamp = f"2026-06-09T{rng.randint(8, 18):02d}:{rng.randint(0, 59):02d}:00Z"
        lines += ["", f"📌 Team update ({stamp}): {t.title} — decided by {gen.agent().name}"]
    return "\n".join(lines) + "\n"


def _casting_history(gen: _Gen, agent: _Agent, index: int) -> str:
    """A history in Squad's casting shape (`# Name — History`, `## Core Context`, `## Learnings`, the
    append comment) and what the agent appended since: dated bullets, `**Title:**` paragraphs, `📌` lines,
    `### D: topic` entries. The first agent's is still as cast."""
    rng = gen.rng
    p = gen.project
    c = gen.component()
    c2 = gen.component(besides=c)
    lines = [
        f"# {agent.name} — History",
        "",
        "## Core Context",
        "",
        f"- **Project:** {p.name} — {p.tagline}.",
        f"- **Role:** {agent.role}",
        "",
        "## Learnings",
        "",
        _APPEND_HERE,
    ]
    if index == 0:
        return "\n".join(lines) + "\n"
    day = datetime(2026, 5, 12, tzinfo=UTC)
    bullet = False
    for _ in range(rng.randint(4, 14)):
        day += timedelta(days=rng.randint(1, 4))
        comp = gen.component()
        kind = rng.random()
        if not (bullet and kind < 0.35):
            lines.append("")
        bullet = kind < 0.35
        if bullet:
            lines.append(f"- {day:%Y-%m-%d}: {_fill(gen.deal(_BULLETS), comp, c2)}")
        elif kind < 0.65:
            title, text = rng.choice(_LEARNINGS)
            lines.append(f"**{_fill(title, comp, c2)}:** {_fill(text, comp, c2)}")
        elif kind < 0.8:
            other = gen.agent(agent.folder).name
            text = _fill(gen.deal(_UPDATES), comp, c2, other, rng.randint(2, 19))
            lines.append(f"📌 {day:%Y-%m-%d} — {text}")
        else:
            title, text = rng.choice(_LEARNINGS)
            lines += [f"### {day:%Y-%m-%d}: {_fill(title, comp, c2)}", "", _fill(text, comp, c2)]
    return "\n".join(lines) + "\n"


def _init_history(gen: _Gen, agent: _Agent, index: int, decided: list[tuple[str, str]]) -> str:
    """A history as `squad init` writes it, with what squad_memory added since (`### D` entries in
    `## Learnings`, `## Decisions`, `## Context`) and the Scribe's `📌 Team update (…): … — decided by
    Name` lines appended at the end. Every third agent's is still as initialised."""
    rng = gen.rng
    p = gen.project
    c = gen.component()
    c2 = gen.component(besides=c)
    human = rng.choice(_HUMANS_PLAIN + _HUMANS_ACCENTED)[0]
    lines = [
        "# Project Context",
        "",
        f"- **Owner:** {human}",
        f"- **Project:** {p.name} — {p.tagline}",
        f"- **Stack:** {p.stack}",
        "- **Created:** 2026-08-17",
        "",
        "## Core Context",
        "",
        f"Joined as {agent.role} when the team was initialized; owns nothing yet.",
        "",
        "## Recent Updates",
        "",
        "📌 Team initialized on 2026-08-17",
        "",
        "## Learnings",
    ]
    day = datetime(2026, 11, 3, tzinfo=UTC)
    if index % 3:
        for _ in range(rng.randint(1, 4)):
            title, text = rng.choice(_LEARNINGS)
            lines += ["", f"### {day:%Y-%m-%d}", "", f"{_fill(title, c, c2)}: {_fill(text, c, c2)}"]
            day += timedelta(days=rng.randint(1, 5))
        if rng.random() < 0.6:
            lines += [
                "",
                "## Decisions",
                "",
                f"### {day:%Y-%m-%d}",
                "",
                _fill(rng.choice(_MEMORY_DECISIONS), c, c2),
            ]
        if rng.random() < 0.5:
            other = gen.agent(agent.folder).name
            lines += [
                "",
                "## Context",
                "",
                f"### {day:%Y-%m-%d}",
                "",
                _fill(rng.choice(_SESSIONS), c, c2, other),
            ]
    updates = rng.sample(decided, min(len(decided), rng.randint(1, 3)))
    if updates:
        lines.append("")
    when = datetime(2026, 11, 20, 11, 4, 35, tzinfo=UTC)
    for _shape, title in updates:
        lines.append(f"📌 Team update ({_iso_z(when)}): {title} — decided by {gen.agent().name}")
        when += timedelta(hours=rng.randint(3, 40), minutes=rng.randint(0, 59))
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------------
# Odd bytes: a byte-order mark, CRLF, control characters, Unicode that breaks naive line splitting

_RTL_NAME = _HUMANS_RTL[0][0]
_ODD_BLOCK = "\n".join(
    [
        f"### 2026-03-05T19:02:44Z: Keep names exactly as typed: Zoe\u0308, Zo\u00eb and «{_RTL_NAME}» 👩🏽‍🍳",
        "**By:** \u0141ucja Wrona (Data)",
        "**What:** Names are stored as typed: `Zoe\u0308` (an e and a combining diaeresis) and `Zo\u00eb`"
        " are one name, compared after NFC; Ame\u0301lie, Nin\u0303o and a\u0301\u0302\u0323 survive a round trip.",
        f"**Why:** The rota showed «{_RTL_PHRASE}» backwards and split one volunteer into two.",
        "",
        "- Emoji with skin tones and joiners (👩🏽‍🍳, 🧑‍🤝‍🧑, 🏳️‍🌈) count as one character in the 40-character limit.",
        f"- Right-to-left text keeps its marks: \u200f«{_RTL_PHRASE}»\u200f and \u202bembedded\u202c.",
        "- A pasted line separator\u2028stays inside its line, and so does a next-line mark\u0085here.",
    ]
)
_CONTROL_LINE = "- Pasted from the build log: \x1b[31mFAILED\x1b[0m test_rota_export \x01(exit 1)\x00 and the rest was lost."
_ODD_LEARNINGS = "\n".join(
    [
        f"- \u05e9\u05dd \u05de\u05dc\u05d0: {_RTL_NAME} — the export keeps it right to left.",
        "- 🧪 Tests with `Zoe\u0308`, `Ame\u0301lie` and 🏳️‍🌈 in names pass on the tablets.",
        "\t- A tab-indented bullet someone pasted from a terminal.",
        "- The field separator\u2028was pasted from a PDF; it is one line.",
        "- Zero\u200bwidth space, soft\u00adhyphen and a non\u00a0breaking space, all in one line.",
    ]
)


def _odd_log(text: str) -> str:
    """The log with a block of odd Unicode before its first block, then a byte-order mark and CRLF."""
    first = re.search(r"^#{1,3} (?:\d{4}-\d{2}-\d{2}|Decision:)", text, re.MULTILINE)
    at = first.start() if first else len(text)
    text = text[:at] + _ODD_BLOCK + "\n\n" + text[at:]
    return "\ufeff" + text.replace("\n", "\r\n")


def _odd_history(text: str, index: int) -> str:
    """The first agent's history with a byte-order mark and CRLF; the second's with one line holding a
    NUL and other control characters; the third's with odd Unicode in its learnings and no final
    newline."""
    if index == 0:
        return "\ufeff" + text.replace("\n", "\r\n")
    if index == 1:
        return text.replace("## Learnings\n\n", f"## Learnings\n\n{_CONTROL_LINE}\n", 1)
    return text.replace("## Learnings\n\n", f"## Learnings\n\n{_ODD_LEARNINGS}\n\n", 1).rstrip("\n")


# --------------------------------------------------------------------------------------------------
# Public API


def write_squad_team(
    root: Path,
    *,
    layout: str = ".squad",
    log_lines: int = 2000,
    agents: int = 20,
    inbox: bool = True,
    seed: int = 1,
    newest_first: bool = True,
    separators: str = "mixed",
    log: str = "scribe",
    histories: str = "census",
    odd_bytes: bool = False,
    history_kb: int = 0,
) -> SquadTeam:
    """Writes a Squad team folder at root/layout and returns what was written.

    `separators`: "mixed" (stretches with `---` between blocks and stretches without), "always" or
    "never" (then the `# Decision:` blocks sit together at the end, since nothing else would end them).
    The team.md / routing.md / ceremonies.md / config.json / log/ / orchestration-log/ files are always
    written; `inbox` only controls decisions/inbox/.

    `log` is the shape of decisions.md (LOG_STYLES): "scribe" (the census mix of SHAPES), "rich" (dated
    blocks with rules, sub-headings, tables, lists and code in their bodies, RICH_SHAPES; `log_lines`,
    `newest_first` and `separators` apply), "day-sections" (DAY_SHAPES) or "squad-written" (SQUAD_SHAPES,
    with decisions-archive.md, an inbox of Squad's own files, `.gitattributes` and `.gitignore`).
    `histories` is the shape of every history.md (HISTORY_STYLES): "census", "dated", "casting" or
    "squad-init". `odd_bytes` gives decisions.md a block of odd Unicode, a byte-order mark and CRLF, and the
    first three histories a byte-order mark and CRLF, a line of control characters (a NUL among them), and
    odd Unicode with no final newline (it needs three agents). `history_kb` makes the first agent's census
    history at least that many KB.
    """
    if agents < 1:
        raise ValueError("a team needs at least one agent")
    if separators not in ("mixed", "always", "never"):
        raise ValueError(f"separators must be mixed, always or never, not {separators!r}")
    if log not in LOG_STYLES:
        raise ValueError(f"log must be one of {', '.join(LOG_STYLES)}, not {log!r}")
    if histories not in HISTORY_STYLES:
        raise ValueError(f"histories must be one of {', '.join(HISTORY_STYLES)}, not {histories!r}")
    if odd_bytes and agents < 3:
        raise ValueError("odd_bytes needs at least three agents")
    rng = random.Random(seed)
    project = rng.choice(_PROJECTS)
    team_agents = []
    for i in range(agents):
        folder, role = _AGENT_POOL[i % len(_AGENT_POOL)]
        if i >= len(_AGENT_POOL):
            folder = f"{folder}{i // len(_AGENT_POOL) + 1}"
        team_agents.append(_Agent(folder=folder, name=folder[0].upper() + folder[1:], role=role))
    gen = _Gen(rng, project, team_agents)

    folder = root / layout
    files: dict[str, bytes] = {}

    def put(relative: str, text: str) -> None:
        _write(root, files, f"{layout}/{relative}", text)

    archive = ""
    squad_inbox: list[tuple[str, str]] = []
    shapes: tuple[str, ...] = SHAPES
    if log == "scribe":
        text, blocks = _decisions(gen, log_lines=log_lines, newest_first=newest_first, separators=separators)
        made = [(b.shape, b.title) for b in blocks]
    elif log == "rich":
        text, made = _rich_log(gen, log_lines=log_lines, newest_first=newest_first, separators=separators)
        shapes = RICH_SHAPES
    elif log == "day-sections":
        text, made = _day_sections_log(gen)
        shapes = DAY_SHAPES
    else:
        text, archive, made, squad_inbox = _squad_written(gen)
        shapes = SQUAD_SHAPES
    put("decisions.md", _odd_log(text) if odd_bytes else text)
    if archive:
        put("decisions-archive.md", archive)
        _write(
            root,
            files,
            ".gitattributes",
            f"{layout}/decisions.md merge=union\n{layout}/agents/*/history.md merge=union\n",
        )
        _write(root, files, ".gitignore", f"node_modules/\n{layout}/decisions/inbox/\n")

    sizes = ("short", "long", "medium", "short")
    for i, agent in enumerate(team_agents):
        size = sizes[i % len(sizes)]
        put(f"agents/{agent.folder}/charter.md", _charter(gen, agent))
        if histories == "census":
            history = _history(gen, agent, size, min_bytes=history_kb * 1024 if i == 0 else 0)
        elif histories == "dated":
            history = _dated_history(gen, agent, i)
        elif histories == "casting":
            history = _casting_history(gen, agent, i)
        else:
            history = _init_history(gen, agent, i, made)
        if odd_bytes and i < 3:
            history = _odd_history(history, i)
        put(f"agents/{agent.folder}/history.md", history)

    put("identity/now.md", _now(gen))

    inbox_files: list[str] = []
    if inbox:
        for name, body in squad_inbox if log == "squad-written" else _inbox(gen):
            put(f"decisions/inbox/{name}", body)
            inbox_files.append(name)

    put("team.md", _team_md(gen))
    put("routing.md", _routing_md(gen))
    put("ceremonies.md", _ceremonies_md(gen))
    put("config.json", _config_json(gen))
    for name, body in _logs(gen):
        put(name, body)

    counts = {shape: 0 for shape in shapes}
    for shape, _title in made:
        counts[shape] += 1
    return SquadTeam(
        root=root,
        folder=folder,
        agents=[a.folder for a in team_agents],
        decision_blocks=len(made),
        inbox_files=sorted(inbox_files),
        files=files,
        layout=layout,
        newest_first=newest_first,
        separators=separators,
        shape_counts=counts,
        titles=[title for _shape, title in made],
        log=log,
        histories=histories,
    )


# The named fixtures: a team folder in each shape people and Squad's own code write, as arguments of
# write_squad_team. Adoption is measured on each (bench/adoption.py, tests/ledger/test_adoption_coverage.py).
FIXTURES: dict[str, dict[str, Any]] = {
    "default team": {},
    "dated log": {"log": "rich", "log_lines": 400, "agents": 3},
    "day sections": {"log": "day-sections", "agents": 3},
    "Squad-written": {"log": "squad-written", "histories": "squad-init", "agents": 6},
    "histories dated": {"histories": "dated", "log_lines": 150, "agents": 6},
    "casting": {"histories": "casting", "log_lines": 150, "agents": 6},
    "odd bytes": {"odd_bytes": True, "log_lines": 300, "agents": 4},
    "long files": {"log": "rich", "log_lines": 2000, "agents": 2, "history_kb": 60},
}


def write_fixture(root: Path, name: str, *, seed: int = 1) -> SquadTeam:
    """Writes the named fixture (a key of FIXTURES) at root and returns what was written."""
    return write_squad_team(root, seed=seed, **FIXTURES[name])


def crlf(path: Path) -> None:
    """Rewrites one file with CRLF line endings (lines already ending in CRLF stay as they are)."""
    data = path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    path.write_bytes(data)


def _uses_separators(lines: list[str]) -> bool:
    outside = _outside_fences(lines)
    return any(ok and line.rstrip("\r\n").rstrip() == "---" for line, ok in zip(lines, outside, strict=True))


def _insert_block(path: Path, block: str, newest_first: bool) -> None:
    """Puts `block` (LF text) into a decision log the way Squad's Scribe does, in the file's line endings."""
    raw = path.read_bytes().decode("utf-8")
    nl = _newline_of(raw)
    lines = _split_keepends(raw)
    separated = _uses_separators(lines)
    new = [line + nl for line in block.rstrip("\n").split("\n")]
    outside = _outside_fences(lines)
    first = next(
        (i for i, line in enumerate(lines) if outside[i] and _BLOCK_HEADING.match(line)),
        None,
    )
    if newest_first and first is not None:
        before = [nl] if first > 0 and lines[first - 1].strip() else []
        after = [nl, "---" + nl, nl] if separated else [nl]
        lines[first:first] = before + new + after
    else:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += nl
        content = [line.strip() for line in lines if line.strip()]
        tail: list[str] = []
        if lines and lines[-1].strip():
            tail.append(nl)
        if separated and content and content[-1] != "---":
            tail += ["---" + nl, nl]
        lines += tail + new
    path.write_bytes("".join(lines).encode("utf-8"))


def scribe_append(team: SquadTeam, *, title: str, author: str, body: str, date: str) -> str:
    """Adds a block to decisions.md as Squad's Scribe does and returns the block text (LF line endings).

    The block is `### {date}: {title}`, `**By:** {author}`, then the body. It goes at the top, after
    the preamble, when the log is newest-first, else at the end; a `---` line separates it from its
    neighbour when the file already uses separators. The file keeps its own line endings.
    """
    block = f"### {date}: {title}\n**By:** {author}\n"
    if body.strip("\n"):
        block += body.strip("\n") + "\n"
    _insert_block(team.decisions_path, block, team.newest_first)
    return block


_FIELD = re.compile(r"^(?:\*\*(Author|By|Date|Owner):\*\*|(Date|Owner):)\s*(.+?)\s*$")
_DATED_TITLE = re.compile(r"^#{1,6}\s+(\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}:\d{2}Z)?)\s*:\s*(.+?)\s*$")
_AGENT_TOPIC = re.compile(r"^(\S+) — (.+)$")


def scribe_merge_inbox(team: SquadTeam, name: str) -> str:
    """Merges inbox file `name` into decisions.md as Squad's Scribe does, deletes it, returns the block.

    The block is `### {date}: {title}` and `**By:** {author}` (left out when the file has its own
    `**By:**`), then the rest of the file (after a blank line unless it starts with fields). Title, author and date come from the file's heading and
    fields, else from its name. Placement follows `scribe_append`.
    """
    path = team.inbox_path(name)
    text = path.read_bytes().decode("utf-8").replace("\r\n", "\n")
    lines = text.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    stem = path.name.removesuffix(".md")
    title = ""
    date = ""
    author = ""
    first = lines[0] if lines else ""
    dated = _DATED_TITLE.match(first)
    if dated:
        date, title = dated.group(1), dated.group(2)
        lines.pop(0)
    elif first.startswith("# "):
        title = first[2:].strip().removeprefix("Decision:").strip()
        agent_topic = _AGENT_TOPIC.match(title)
        if agent_topic:
            author, title = agent_topic.group(1), agent_topic.group(2)
            title = title[0].upper() + title[1:]
        lines.pop(0)
    has_by = False
    for line in lines:
        field_match = _FIELD.match(line)
        if not field_match:
            continue
        label = field_match.group(1) or field_match.group(2)
        value = field_match.group(3)
        if label == "By":
            has_by = True
        elif label == "Date" and not date:
            date = value.split()[0]
        elif label in ("Author", "Owner"):
            author = author or value
    words = stem.split("-")
    if not title:
        title = " ".join(words[1:]).capitalize() or stem
    if not date:
        stamp = re.search(r"(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z", stem)
        date = "{}-{}-{}T{}:{}:{}Z".format(*stamp.groups()) if stamp else "2026-03-09"
    if not author:
        author = words[0][:1].upper() + words[0][1:]
    body = "\n".join(lines).strip("\n")
    block = f"### {date}: {title}\n"
    if not has_by:
        block += f"**By:** {author}\n"
    if body:
        # Fields follow the heading directly; anything else gets a blank line first.
        if not re.match(r"^(\*\*[^*\n]+:\*\*|[A-Z][A-Za-z ]*: )", body):
            block += "\n"
        block += body + "\n"
    _insert_block(team.decisions_path, block, team.newest_first)
    path.unlink()
    return block


def person_adds_bullet(root: Path, agent_folder: str, section: str, text: str, layout: str = ".squad") -> str:
    """Appends `- {text}` at the end of a section of an agent's history.md, as a person would; returns it.

    `section` is the heading text ("Learnings", "Core Context"). A section runs to the next `#` or `##`
    heading (sub-headings belong to it). A blank line goes before the bullet when the line above it is
    not part of a list. Raises KeyError when the section is missing.
    """
    path = root / layout / "agents" / agent_folder / "history.md"
    raw = path.read_bytes().decode("utf-8")
    nl = _newline_of(raw)
    lines = _split_keepends(raw)
    outside = _outside_fences(lines)
    wanted = section.lstrip("#").strip().casefold()
    start = None
    level = 0
    end = len(lines)
    for i, line in enumerate(lines):
        heading = _HEADING.match(line.rstrip("\r\n")) if outside[i] else None
        if not heading:
            continue
        depth = len(heading.group(1))
        if start is None:
            if heading.group(2).casefold() == wanted:
                start, level = i, max(depth, 2)
        elif depth <= level:
            end = i
            break
    if start is None:
        raise KeyError(f"no section {section!r} in {path}")
    last = end - 1
    while last > start and not lines[last].strip():
        last -= 1
    bullet = f"- {text}"
    previous = lines[last].rstrip("\r\n")
    in_list = previous.startswith(("- ", "* ", "+ ", " ", "\t")) or bool(re.match(r"\d+\. ", previous))
    if not lines[last].endswith("\n"):
        lines[last] += nl
    new = [bullet + nl] if in_list and last != start else [nl, bullet + nl]
    lines[last + 1 : last + 1] = new
    path.write_bytes("".join(lines).encode("utf-8"))
    return bullet


def _numbered(data: bytes) -> list[tuple[int, str]]:
    text = data.decode("utf-8")
    out = []
    for number, line in enumerate(text.split("\n"), start=1):
        bare = line.removesuffix("\r")
        if bare.strip():
            out.append((number, bare))
    return out


def lines_of(data: bytes) -> list[str]:
    """The non-blank lines of a UTF-8 file, without their line endings (CRLF and LF read alike)."""
    return [line for _, line in _numbered(data)]


def assert_lines_kept(before: bytes, after: bytes) -> None:
    """Asserts every non-blank line of `before` is in `after`, in the same order (other lines may be added)."""
    old = _numbered(before)
    new = _numbered(after)
    j = 0
    for i, (number, line) in enumerate(old):
        while j < len(new) and new[j][1] != line:
            j += 1
        if j < len(new):
            j += 1
            continue
        shown = line if len(line) <= 160 else line[:157] + "..."
        where = next((n for n, other in new if other == line), None)
        if where is None:
            problem = "is missing from the new text"
        else:
            problem = f"is out of order: the new text has it only at line {where}, before earlier kept lines"
        previous = ""
        if i > 0:
            kept_at = _last_match(old[:i], new)
            previous = f"; the line before it (old line {old[i - 1][0]}) is at new line {kept_at}"
        raise AssertionError(f"old line {number} {problem}: {shown!r}{previous}")


def _last_match(old: list[tuple[int, str]], new: list[tuple[int, str]]) -> int:
    """The new line number where the last of `old` matched in the greedy subsequence scan."""
    j = 0
    at = 0
    for _, line in old:
        while j < len(new) and new[j][1] != line:
            j += 1
        if j == len(new):
            return 0
        at = new[j][0]
        j += 1
    return at
