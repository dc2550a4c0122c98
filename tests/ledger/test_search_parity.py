"""One set of queries, one ledger, the same expected top results on SQLite and on PostgreSQL.

CI runs this file on both engines (`.ci/run`): what `q` finds (docs/api.md "Text search") must not
depend on the database. The ledger is a Squad team's, adopted the way `decisions.md` blocks and
`history.md` learnings read, with the tokens people really type in them: script names, ticket ids,
versions, addresses, `snake_case` identifiers, paths, accented names. Each of those, searched by its
exact text, finds its row first: PostgreSQL's parser keeps most of them as one token in the index,
SQLite's tokenizer cuts them into words, and the query is read the same way the text was on each.

The expectations are data (`QUERIES`): a query, the kind of row searched, and the rows expected first,
in order (`[]`: nothing matches). Rows that merely share a word with a query are in the ledger on
purpose (`Deploy web pages from CI` beside `deploy-web-pages.sh`), so a top result is a real choice.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from ledger import search, services
from ledger.models import AgentMemory, Decision, Episode, InboxEntry, Project

pytestmark = pytest.mark.django_db

# (title, what, why), written as the Scribe merges them into decisions.md.
DECISIONS = [
    (
        "Release the docs site with deploy-web-pages.sh",
        "**By:** Ripley (Lead)\n**What:** The docs site ships only through `scripts/deploy-web-pages.sh`; "
        "nobody pushes to the gh-pages branch by hand.",
        "A hand push skipped the link check twice.",
    ),
    (
        "Deploy web pages from CI after review",
        "**By:** Dallas (DevOps)\n**What:** The preview pages are built for every pull request and the "
        "web team reviews them before the merge.",
        "Reviewers saw broken pages too late.",
    ),
    (
        "AIPLAN-04: retire the nightly export",
        "**By:** Lambert (Data)\n**What:** The nightly CSV export stops on 2026-03-31; the warehouse "
        "reads the change feed instead.",
        "The export took four hours and nobody read it.",
    ),
    (
        "AIPLAN-05: keep the audit log for two years",
        "**By:** Lambert (Data)\n**What:** Audit rows older than two years are archived, not deleted.",
        "Legal asked for two years.",
    ),
    (
        "Pin the Squad CLI to v0.13.1",
        "**By:** Parker (Tooling)\n**What:** Every agent runs squad-cli v0.13.1 until the inbox format "
        "settles; the CI image pins it too.",
        "v0.14 changed how inbox files are named.",
    ),
    (
        "Python 3.11 is the floor",
        "**By:** Ash (Platform)\n**What:** Code may use `tomllib` and exception groups; 3.10 is no longer "
        "tested.",
        "The base image moved to Debian 12.",
    ),
    (
        "Release sign-off goes to release-desk@tidepool.example.com",
        "**By:** Ripley (Lead)\n**What:** Each release asks release-desk@tidepool.example.com for a "
        "sign-off before the tag is pushed.",
        "One address the on-call rota reads.",
    ),
    (
        "Rename fetch_fleet_status to read_fleet_status",
        "**By:** Kane (Backend)\n**What:** `fetch_fleet_status` becomes `read_fleet_status`: it never "
        "fetches, it reads the cache.",
        "The old name made people add retries around it.",
    ),
    (
        "Fleet status reads the cache",
        "**By:** Kane (Backend)\n**What:** The status page reads the fleet cache; the cache is refreshed "
        "every minute.",
        "Status used to time out under load.",
    ),
    (
        "Queue jobs in PostgreSQL, not Redis",
        "**By:** Marlow (Backend)\n**What:** Background jobs are rows claimed with SELECT … FOR UPDATE "
        "SKIP LOCKED.",
        "One database to back up; the load is a few jobs a minute.",
    ),
    (
        "Zoë owns the café booking flow",
        "**By:** Ripley (Lead)\n**What:** Zoë Ångström reviews every change to the café booking pages.",
        "She wrote the flow and knows its edge cases.",
    ),
    (
        "Branch names follow squad/{issue}-{slug}",
        "**By:** Parker (Tooling)\n**What:** A branch is named `squad/142-fix-login`: the issue number, "
        "then a short slug.",
        "Ralph's board links branches to issues by that pattern.",
    ),
    (
        "Colour tokens for the terminal UI",
        "**By:** Juno (UI)\n**What:** Use the five palette tokens for every panel; no raw hex values.",
        "The dark and light themes drifted apart.",
    ),
    (
        "Webhook retries use exponential backoff",
        "**By:** Marlow (Backend)\n**What:** A failed payment webhook is retried after 1, 2, 4 and 8 "
        "minutes, then parked for a person.",
        "The provider rate-limits bursts of retries.",
    ),
]

# (agent, learning), as `history.md` holds them under `## Learnings`.
MEMORIES = [
    ("Ripley", "deploy-web-pages.sh needs GH_TOKEN in the environment, or it fails without a message."),
    ("Dallas", "The web pages build takes six minutes on CI; cache node_modules to halve it."),
    ("Lambert", "AIPLAN-04 is done: the export job is gone and the warehouse reads the change feed."),
    ("Parker", "squad-cli v0.13.1 writes inbox files as {agent}-{slug}.md; v0.13.0 wrote {slug}.md."),
    ("Kane", "fetch_fleet_status is called from three places; all of them now call read_fleet_status."),
    ("Ash", "PostgreSQL 15 is what the staging database runs; production is on 16."),
    ("Juno", "Zoë prefers screenshots of the café pages in every pull request."),
    ("Marlow", "The payment provider sends each webhook twice when it times out: check the idempotency key."),
    ("Ripley", "Ask release-desk@tidepool.example.com before tagging; they answer within the hour."),
    ("Dallas", "Version 13 of the mobile app still calls the old status endpoint."),
]

# (agent, run, what was tried, files)
EPISODES = [
    ("Kane", "run-311", "Renamed the status reader and updated its callers.", ["fleet/status_reader.py"]),
    (
        "Dallas",
        "run-312",
        "Moved the docs deploy into CI.",
        ["scripts/deploy-web-pages.sh", ".github/ci.yml"],
    ),
]

# (agent, slug, title, content)
ENTRIES = [
    ("Parker", "pin-squad-cli", "Pin squad-cli", "Pin squad-cli to v0.13.1 in the CI image as well."),
    ("Juno", "palette-tokens", "Palette tokens", "Five colour tokens, one per panel role."),
]


@dataclass(frozen=True)
class Expected:
    """A query, the rows it is run on, and the rows expected first, in order: each named by a
    decision's title, an entry's slug, or the start of a memory's or episode's text."""

    q: str
    model: type
    top: tuple[str, ...]


def _d(q: str, *top: str) -> Expected:
    return Expected(q, Decision, top)


def _m(q: str, *top: str) -> Expected:
    return Expected(q, AgentMemory, top)


QUERIES = [
    # plain words
    _d("docs site", "Release the docs site with deploy-web-pages.sh"),
    _d("nightly export", "AIPLAN-04: retire the nightly export"),
    _d("exponential backoff", "Webhook retries use exponential backoff"),
    _d("palette colour", "Colour tokens for the terminal UI"),
    _d("booking", "Zoë owns the café booking flow"),
    _m("idempotency", "The payment provider sends each webhook twice"),
    _m("staging database", "PostgreSQL 15 is what the staging database runs"),
    # several words, only some in the row
    _d("retire the export and the warehouse", "AIPLAN-04: retire the nightly export"),
    _d("which naming pattern do our branches follow", "Branch names follow squad/{issue}-{slug}"),
    _d("undo the release of the docs site", "Release the docs site with deploy-web-pages.sh"),
    _m("how long does the web pages build take", "The web pages build takes six minutes"),
    # phrases typed as they are written
    _d("fleet status reads the cache", "Fleet status reads the cache"),
    _d("Queue jobs in PostgreSQL, not Redis", "Queue jobs in PostgreSQL, not Redis"),
    # file names and paths
    _d("deploy-web-pages.sh", "Release the docs site with deploy-web-pages.sh"),
    _m("deploy-web-pages.sh", "deploy-web-pages.sh needs GH_TOKEN"),
    Expected("scripts/deploy-web-pages.sh", Episode, ("Moved the docs deploy into CI.",)),
    Expected("fleet/status_reader.py", Episode, ("Renamed the status reader",)),
    # ticket ids
    _d("AIPLAN-04", "AIPLAN-04: retire the nightly export"),
    _d("AIPLAN-05", "AIPLAN-05: keep the audit log for two years"),
    _m("AIPLAN-04", "AIPLAN-04 is done"),
    # versions
    _d("v0.13.1", "Pin the Squad CLI to v0.13.1"),
    _m("v0.13.1", "squad-cli v0.13.1 writes inbox files"),
    _d("3.11", "Python 3.11 is the floor"),
    Expected("v0.13.1", InboxEntry, ("pin-squad-cli",)),
    # e-mail addresses
    _d("release-desk@tidepool.example.com", "Release sign-off goes to release-desk@tidepool.example.com"),
    _m("release-desk@tidepool.example.com", "Ask release-desk@tidepool.example.com"),
    # identifiers
    _d("fetch_fleet_status", "Rename fetch_fleet_status to read_fleet_status"),
    _m("read_fleet_status", "fetch_fleet_status is called from three places"),
    _d("squad/{issue}-{slug}", "Branch names follow squad/{issue}-{slug}"),
    # accents and odd letters
    _d("Zoë", "Zoë owns the café booking flow"),
    _d("café", "Zoë owns the café booking flow"),
    _m(
        "Ångström",
    ),  # in a decision, not in any memory
    _d("ÅNGSTRÖM", "Zoë owns the café booking flow"),
    _m("Zoë café", "Zoë prefers screenshots of the café pages"),
    # typing: the last word is a prefix
    _d("postg", "Queue jobs in PostgreSQL, not Redis"),
    _d("exponential back", "Webhook retries use exponential backoff"),
    _m("idempot", "The payment provider sends each webhook twice"),
    Expected("palet", InboxEntry, ("palette-tokens",)),
    # nothing to search for, or nothing that matches
    _d("the and of it"),
    _d("--- ... !!!"),
    _d("kubernetes helm chart"),
    _m("🙂"),
]


@pytest.fixture
def ledger(db: None) -> Project:
    project, _ = services.project_create_or_update(slug="tidepool", name="Tidepool")
    for title, content, rationale in DECISIONS:
        services.decision_create(
            project=project,
            agent_name="Scribe",
            type="technical",
            title=title,
            content=content,
            rationale=rationale,
            by="scribe",
        )
    for agent, content in MEMORIES:
        services.memory_record(project=project, agent_name=agent, type="learning", content=content)
    for agent, run_id, tried, files in EPISODES:
        services.episode_record(
            project=project, agent_name=agent, run_id=run_id, outcome="succeeded", tried=tried, files=files
        )
    for agent, slug, title, content in ENTRIES:
        services.entry_submit(
            project=project, agent_name=agent, slug=slug, type="technical", title=title, content=content
        )
    return project


def _name(row: object) -> str:
    if isinstance(row, Decision):
        return row.title
    if isinstance(row, InboxEntry):
        return row.slug
    if isinstance(row, Episode):
        return row.tried
    assert isinstance(row, AgentMemory)
    return row.content


def _top(expected: Expected, project: Project) -> list[str]:
    rows = search.search(expected.model.objects.filter(project=project), expected.q)
    return [_name(row) for row in rows[: max(len(expected.top), 1)]]


def test_the_query_set_is_broad():
    assert len(QUERIES) >= 30
    assert {e.model for e in QUERIES} == {Decision, AgentMemory, Episode, InboxEntry}


@pytest.mark.parametrize("expected", QUERIES, ids=[f"{e.model.__name__}:{e.q}" for e in QUERIES])
def test_the_top_results_are_the_expected_ones(ledger, expected):
    top = _top(expected, ledger)
    if not expected.top:
        assert top == []
        return
    assert len(top) == len(expected.top), top
    for found, wanted in zip(top, expected.top, strict=True):
        assert found.startswith(wanted), (expected.q, top)


@pytest.mark.parametrize("title", [title for title, _, _ in DECISIONS])
def test_every_decision_is_found_first_by_its_exact_title(ledger, title):
    rows = search.search(Decision.objects.filter(project=ledger), title)
    assert rows[0].title == title


@pytest.mark.parametrize("agent, content", MEMORIES)
def test_every_memory_is_found_first_by_its_exact_text(ledger, agent, content):
    rows = search.search(AgentMemory.objects.filter(project=ledger), content)
    assert rows[0].content == content
