"""Export and import timings for a large project.

    python bench/mirror.py                     # SQLite (temporary file)
    python bench/mirror.py --database-url postgres://postgres@127.0.0.1:5432/postgres

First, adoption: a Squad team's folder (a 2,500-line `decisions.md`, fifty agents' `history.md`, inbox
files in every shape) is imported into an empty project, exported (no byte changes), then synced again
after Squad's Scribe appends a block.

Then seeds 10,000 decisions, 5,000 pending entries and 20,000 memories, and times a first export into an
empty workspace, a re-export with nothing changed, an export after each of a few single writes (an entry
submitted, a memory recorded, a pattern recorded, an entry merged into a decision, a decision superseded,
an entry rejected, the session's focus changed), a full re-export (the repair, `export_ledger --full`),
an import of the 5,000 exported inbox files (all unchanged), and an import of 1,000 new hand-written
files. Each export but the first, the sync's and the repair is the background export a write queues
(`every=False`: a folder in which no file was created, removed or renamed since is not listed).
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


def one_writes(project: Any) -> list[tuple[str, Callable[[], object]]]:
    """Single writes as agents and coordinators make them, each followed by the export it queues."""
    from ledger import services
    from ledger.models import Decision, EntryStatus, InboxEntry

    pending = InboxEntry.objects.filter(project=project, status=EntryStatus.PENDING)
    boundary = pending.filter(type="architectural").order_by("pk").first()
    other = pending.order_by("-pk").first()
    active = Decision.objects.filter(project=project, status="active").order_by("pk")
    old, new = active[0], active[1]
    assert boundary is not None and other is not None
    return [
        (
            "an entry submitted",
            lambda: services.entry_submit(
                project=project, agent_name="Agent 3", slug="bench-new", type="scope", content="New."
            ),
        ),
        (
            "a memory recorded",
            lambda: services.memory_record(
                project=project, agent_name="Agent 4", type="learning", content="Bench learning."
            ),
        ),
        (
            "a pattern recorded",
            lambda: services.memory_record(
                project=project, agent_name="Agent 5", type="pattern", content="Bench pattern."
            ),
        ),
        (
            "an entry merged into a decision",
            lambda: services.entry_merge(
                project=project, entry_id=boundary.pk, by="lead", keep_both=True, confirm_flagged=True
            ),
        ),
        (
            "a decision superseded",
            lambda: services.decision_supersede(
                project=project, decision_id=old.pk, superseded_by_id=new.pk, by="lead"
            ),
        ),
        ("an entry rejected", lambda: services.entry_reject(project=project, entry_id=other.pk, by="lead")),
        (
            "the session's focus changed",
            lambda: services.session_update_current(project=project, focus_area="Bench focus"),
        ),
    ]


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
    # The export syncs the file system once for the files it writes: what the seed left in the page cache
    # (the database's own files) is flushed first, so that the export pays for its own files alone.
    os.sync()
    timed("first export", lambda: mirror.export_project(project))
    # What the export after a write does (`ledger.tasks`): the folders unchanged since are not listed.
    background = lambda: mirror.export_project(project, every=False)  # noqa: E731
    timed("re-export, nothing changed", background)
    timed("re-export, nothing changed (again)", background)
    timed("re-export of a sync, nothing changed: every folder listed", lambda: mirror.export_project(project))
    for label, write in one_writes(project):
        write()
        timed(f"export after one write: {label}", background)
    timed("full re-export (the repair), nothing changed", lambda: mirror.export_project(project, full=True))
    timed("import of 5,000 exported files", lambda: mirror.import_project(project))
    inbox = workspace / ".squad/decisions/inbox"
    for i in range(1_000):
        (inbox / f"hand-{i}.md").write_text(
            f"---\nagent: Person {i % 7}\nslug: hand-{i}\ntype: scope\ntitle: Hand {i}\n---\n"
            "Written by hand.\n"
        )
    timed("import with 1,000 new files", lambda: mirror.import_project(project))


if __name__ == "__main__":
    main()
