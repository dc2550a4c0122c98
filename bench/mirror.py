"""Export and import timings for a large project.

    python bench/mirror.py                     # SQLite (temporary file)
    python bench/mirror.py --database-url postgres://postgres@127.0.0.1:5432/postgres

First, adoption: a Squad team's folder (a 2,500-line `decisions.md`, fifty agents' `history.md`, inbox
files in every shape) is imported into an empty project, exported (no byte changes), then synced again
after Squad's Scribe appends a block.

Then seeds 10,000 decisions, 5,000 pending entries and 20,000 memories, and times a first export into an
empty workspace (three times, each into a new one), a re-export with nothing changed, an export after
each of a few single writes (an entry submitted, a memory recorded, a pattern recorded, an entry merged
into a decision, a decision superseded, an entry rejected, the session's focus changed; five times each,
on other rows each time), a full re-export (the repair, `export_ledger --full`), an import of the 5,000
exported inbox files (all unchanged), and an import of 1,000 new hand-written files. Each export but the
first, the sync's and the repair is the background export a write queues (`every=False`: a folder in
which no file was created, removed or renamed since is not listed). A figure timed several times is
printed as the fastest, the median and the slowest: this machine's speed varies from minute to minute.
"""

from __future__ import annotations

import atexit
import os
import random
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _setup import memory_row, parse_args, setup_django

WORDS = "cache retry index token budget schema lock queue deploy review merge agent session".split()  # noqa: SIM905


def seed(workspace: Path) -> Any:
    from ledger import services
    from ledger.blocks import decision_block
    from ledger.models import Agent, AgentMemory, Decision, InboxEntry
    from ledger.tokens import count_tokens

    rng = random.Random(3)
    project, _ = services.project_create_or_update(slug="bench", name="Bench", workspace=str(workspace))
    agents = Agent.objects.bulk_create(
        [Agent(project=project, key=f"agent {i}", name=f"Agent {i}") for i in range(30)]
    )

    def text(n: int) -> str:
        return " ".join(rng.choices(WORDS, k=n))

    decisions = []
    for i in range(10_000):
        d = Decision(
            project=project,
            agent=rng.choice(agents),
            type=rng.choice(["architectural", "scope", "process", "technical"]),
            title=f"Decision {i} {text(3)}",
            content=text(60),
            rationale=text(15),
            status="archived" if i % 3 == 0 else "active",
        )
        d.tokens = count_tokens(decision_block(d))
        decisions.append(d)
    Decision.objects.bulk_create(decisions, batch_size=1000)
    InboxEntry.objects.bulk_create(
        [
            InboxEntry(
                project=project,
                agent=rng.choice(agents),
                slug=f"proposal-{i}",
                type=rng.choice(["architectural", "scope", "learning", "pattern"]),
                title=f"Proposal {i}: {text(3)}",
                content=text(50),
                rationale=text(10),
            )
            for i in range(5_000)
        ],
        batch_size=1000,
    )
    memories = []
    for _ in range(20_000):
        content = text(40)
        importance = rng.choice(["high", "medium", "low"])
        memories.append(
            memory_row(
                project=project,
                agent=rng.choice(agents),
                type=rng.choice(["core_context", "learning", "pattern", "update"]),
                importance=importance,
                content=content,
            )
        )
    AgentMemory.objects.bulk_create(memories, batch_size=2000)
    services.session_start(project=project, session_id="s1", focus_area="bench", summary="bench")
    return project


def _took(seconds: float) -> str:
    return f"{seconds * 1000:6.0f} ms" if seconds < 1 else f"{seconds:6.2f} s "


def timed(label: str, action):  # type: ignore[no-untyped-def]
    """Run `action`, print its wall time and this process's CPU time (the database server's, for
    PostgreSQL, is not in it), and what it did."""
    started, cpu = time.perf_counter(), time.process_time()
    result = action()
    took, spent = time.perf_counter() - started, time.process_time() - cpu
    print(f"{label:<48} {_took(took)} (cpu {_took(spent)})   {result.summary()}")
    return result


# The first export is timed this many times, each into a new empty workspace.
FIRST_TRIES = 3
# Each single write is made this many times (each on other rows), and its export timed each time.
TRIES = 5


def one_writes(project: Any) -> list[tuple[str, Callable[[int], object]]]:
    """Single writes as agents and coordinators make them, each followed by the export it queues; the
    `n`th try of each writes other rows than the tries before."""
    from ledger import services
    from ledger.models import Decision, EntryStatus, InboxEntry

    pending = InboxEntry.objects.filter(project=project, status=EntryStatus.PENDING)
    boundaries = list(pending.filter(type="architectural").order_by("pk")[:TRIES])
    others = list(pending.exclude(type="architectural").order_by("-pk")[:TRIES])
    active = list(Decision.objects.filter(project=project, status="active").order_by("pk")[: 2 * TRIES])
    assert len(boundaries) == len(others) == TRIES and len(active) == 2 * TRIES
    return [
        (
            "an entry submitted",
            lambda n: services.entry_submit(
                project=project, agent_name="Agent 3", slug=f"bench-new-{n}", type="scope", content="New."
            ),
        ),
        (
            "a memory recorded",
            lambda n: services.memory_record(
                project=project, agent_name="Agent 4", type="learning", content=f"Bench learning {n}."
            ),
        ),
        (
            "a pattern recorded",
            lambda n: services.memory_record(
                project=project, agent_name="Agent 5", type="pattern", content=f"Bench pattern {n}."
            ),
        ),
        (
            "an entry merged into a decision",
            lambda n: services.entry_merge(
                project=project, entry_id=boundaries[n].pk, by="lead", keep_both=True, confirm_flagged=True
            ),
        ),
        (
            "a decision superseded",
            lambda n: services.decision_supersede(
                project=project,
                decision_id=active[2 * n].pk,
                superseded_by_id=active[2 * n + 1].pk,
                by="lead",
            ),
        ),
        (
            "an entry rejected",
            lambda n: services.entry_reject(project=project, entry_id=others[n].pk, by="lead"),
        ),
        (
            "the session's focus changed",
            lambda n: services.session_update_current(project=project, focus_area=f"Bench focus {n}"),
        ),
    ]


def afresh(project: Any) -> None:
    """The project as before its first export: a new empty workspace, no manifest, no entry's file."""
    from ledger.models import InboxEntry, MirrorFile, MirrorState

    workspace = Path(tempfile.mkdtemp(prefix="canon-bench-workspace-"))
    atexit.register(shutil.rmtree, workspace, ignore_errors=True)
    project.workspace = str(workspace)
    project.save(update_fields=["workspace"])
    MirrorFile.objects.filter(project=project).delete()
    MirrorState.objects.filter(pk=project.pk).update(exported={})
    InboxEntry.objects.filter(project=project).update(file="")
    os.sync()


def timed_tries(label: str, tries: int, prepare: Callable[[int], object], action: Callable[[], Any]) -> None:
    """`prepare(n)` (untimed) then time `action`, `tries` times: the fastest, the median and the slowest
    wall time, with the CPU time of the fastest try and the part of it spent in the kernel (which grows
    several times over when this machine is slow: the same page faults cost more)."""
    took: list[tuple[float, float, float, str]] = []
    for n in range(tries):
        prepare(n)
        started, before = time.perf_counter(), os.times()
        result = action()
        after = os.times()
        cpu = after.user - before.user + after.system - before.system
        took.append((time.perf_counter() - started, cpu, after.system - before.system, result.summary()))
    took.sort()
    fastest, median, slowest = took[0], took[len(took) // 2], took[-1]
    print(
        f"{label:<48} {_took(fastest[0])} / {_took(median[0])} / {_took(slowest[0])}"
        f" (cpu {_took(fastest[1])}, kernel {_took(fastest[2])})   {fastest[3]}"
    )


def adoption(engine: str) -> None:
    from ledger import mirror, services
    from ledger.models import AgentMemory, Decision
    from tests.squad_fixtures import scribe_append, write_squad_team

    root = Path(tempfile.mkdtemp(prefix="canon-bench-squad-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    team = write_squad_team(root, log_lines=2500, agents=50)
    lines = (root / ".squad/decisions.md").read_text(encoding="utf-8").count("\n")
    project, _ = services.project_create_or_update(slug="squad", name="Squad", workspace=str(root))
    print(f"{engine}: adopting a Squad folder: decisions.md of {lines:,} lines, {len(team.agents)} histories")
    started = time.perf_counter()
    timed("  import (adopt)", lambda: mirror.import_project(project))
    timed("  export", lambda: mirror.export_project(project))
    total = time.perf_counter() - started
    decisions = Decision.objects.filter(project=project).count()
    memories = AgentMemory.objects.filter(project=project).count()
    print(f"  adopt + export: {total:.2f} s ({decisions:,} decisions, {memories:,} memories)")
    scribe_append(team, title="Bench block", author="Juno", body="Appended.", date="2026-11-22")
    timed("  sync after Squad's Scribe appended", lambda: mirror.import_project(project))
    timed("  export", lambda: mirror.export_project(project))


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    engine = setup_django(args.database_url, "mirror")
    print("load average (1, 5, 15 min): " + ", ".join(f"{n:.2f}" for n in os.getloadavg()))
    from ledger import mirror

    adoption(engine)

    workspace = Path(tempfile.mkdtemp(prefix="canon-bench-workspace-"))
    atexit.register(shutil.rmtree, workspace, ignore_errors=True)
    project = seed(workspace)
    print(f"{engine}: 10,000 decisions, 5,000 pending entries, 20,000 memories -> {workspace}")
    print(f"{'':<48} fastest / median / slowest of {FIRST_TRIES} (first export) or {TRIES} tries")
    # The export syncs the file system once for the files it writes: what the seed or the try before left
    # in the page cache (the database's own files) is flushed first, so that it pays for its own alone.
    first = lambda: mirror.export_project(project)  # noqa: E731
    timed_tries("first export", FIRST_TRIES, lambda n: afresh(project) if n else os.sync(), first)
    # What the export after a write does (`ledger.tasks`): the folders unchanged since are not listed.
    background = lambda: mirror.export_project(project, every=False)  # noqa: E731
    timed_tries("re-export, nothing changed", TRIES, lambda n: None, background)
    timed_tries(
        "re-export of a sync, nothing changed: every folder listed",
        TRIES,
        lambda n: None,
        lambda: mirror.export_project(project),
    )
    for label, write in one_writes(project):
        timed_tries(f"export after one write: {label}", TRIES, write, background)
    timed("full re-export (the repair), nothing changed", lambda: mirror.export_project(project, full=True))
    timed("import of 5,000 exported files", lambda: mirror.import_project(project))
    inbox = Path(project.workspace) / ".squad/decisions/inbox"
    for i in range(1_000):
        (inbox / f"hand-{i}.md").write_text(
            f"---\nagent: Person {i % 7}\nslug: hand-{i}\ntype: scope\ntitle: Hand {i}\n---\n"
            "Written by hand.\n"
        )
    timed("import with 1,000 new files", lambda: mirror.import_project(project))


if __name__ == "__main__":
    main()
