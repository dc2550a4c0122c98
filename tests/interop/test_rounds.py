"""Rounds of writes by Squad's own program and by Canon on one team's folder, every rule checked after each
step (`tests/interop/invariants.py`): no line lost or duplicated, no decision of Canon's lost, Squad's
parsers reading all of Canon's, `squad doctor` and `squad status` as green as on the fresh folder."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ledger import services
from ledger.models import EntryStatus, InboxEntry, Project
from tests.interop import squad
from tests.interop.canon import COORDINATOR, export, mirrored, sync
from tests.interop.invariants import Watch
from tests.interop.scribe_emulation import scribe_pass

COMPONENTS = ["sync service", "map panel", "SMS gateway", "catch ledger", "tablet app", "harbour feed"]
PORTS = ["Ålesund", "Bergen", "Tromsø", "Bodø", "Hammerfest", "Kirkenes"]


def past_decision(n: int) -> tuple[str, str, str]:
    """One of the decisions the team made before Canon came: author, summary, body."""
    component, port = COMPONENTS[n % len(COMPONENTS)], PORTS[n % len(PORTS)]
    summary = f"{component.capitalize()}: contract v{n + 1} for the {port} fleet"
    body = (
        f"The {component} keeps every field of v{n}; new fields are optional and clients ignore what they do "
        f"not know. Skippers' tablets in {port} upgrade when they next dock, so both versions run side by side "
        "for up to three weeks. Rejected: a flag day (half the fleet is at sea at any time). " * 3
    )
    return ("Marlow" if n % 2 else "Juno"), summary, body


def pending(project: Project, words: str) -> InboxEntry:
    """The project's pending entry whose title holds `words`."""
    return InboxEntry.objects.get(project=project, status=EntryStatus.PENDING, title__contains=words)


def test_rounds_of_squad_and_canon_writes_keep_every_line(project, cast_team, data_dir):
    root = cast_team
    today = datetime.now(UTC)
    # The team's past, written by Squad's own writers weeks before Canon came: enough for `squad nap` to archive.
    for n in range(30):
        author, summary, body = past_decision(n)
        squad.decide(root, author, summary, body, now=squad.iso(today - timedelta(days=90 - n)))
    scribe_pass(root, now=squad.iso(today - timedelta(days=60)), affects=["marlow", "juno"])
    squad.memory(
        root,
        "marlow",
        "learnings",
        "Retries need up to 500 ms of jitter.",
        now=squad.iso(today - timedelta(days=50)),
    )
    squad.memory(
        root,
        "juno",
        "updates",
        "Panels use the five palette tokens.",
        now=squad.iso(today - timedelta(days=45)),
    )

    watch = Watch(root, mirrored(project, root), data_dir)
    sync(project)
    watch.canon("first sync: a coordinator adopts the team's files")

    superseded = None
    for number in (1, 2):
        squad.decide(
            root,
            "Marlow",
            f"Shard the position table by fleet (round {number})",
            "One table per fleet keeps vacuum short.",
        )
        watch.squad("squad_decide by Marlow")
        squad.decide(
            root, "Juno", f"Dark mode by default (round {number})", "Wheelhouse screens are read at night."
        )
        watch.squad("squad_decide by Juno")
        squad.memory_write_decision(
            root,
            title=f"Alert when the SMS queue backs up (round {number})",
            author="juno",
            content="Page the on-call skipper liaison when more than 200 messages wait — ✉ not e-mail.",
        )
        watch.squad("squad memory write --class DECISION")
        squad.memory(
            root, "marlow", "learnings", f"Round {number}: the harbour feed drops fixes after midnight UTC."
        )
        watch.squad("squad_memory learnings for Marlow")
        sync(project)
        watch.canon("sync after Squad's agents wrote")

        services.entry_merge(
            project=project, entry_id=pending(project, "Shard the position").pk, by=COORDINATOR
        )
        services.entry_reject(
            project=project,
            entry_id=pending(project, "Dark mode").pk,
            by=COORDINATOR,
            reason="Ask the skippers.",
        )
        services.entry_submit(
            project=project,
            agent_name="Juno",
            slug=f"tablet-offline-cache-{number}",
            type="technical",
            title=f"Cache the last six hours of positions on the tablets (round {number})",
            content="The tablet app keeps six hours of positions so the map works between masts.",
            rationale="Coverage north of Tromsø drops for hours at a time.",
        )
        decision = services.decision_create(
            project=project,
            agent_name="Marlow",
            type="architectural",
            title="Send position updates every ten seconds",
            content=(
                f"Every vessel reports its position every ten seconds (round {number}).\n\n## Details\n\n"
                "The sync service batches them per minute.\n\n---\n\nRevisit when satellite links get cheaper."
            ),
            supersedes=[superseded.pk] if superseded else [],
            by=COORDINATOR,
        )
        superseded = decision
        services.memory_store(
            project=project,
            agent_name="Marlow",
            type="learning",
            importance="high",
            content=f"Round {number}: batch writes per minute, never per fix.",
            by=COORDINATOR,
        )
        if number == 1:
            services.memory_store(
                project=project,
                agent_name="Juno",
                type="core_context",
                content="Escalations go to harbour-desk@tidepool-fleet.no, day and night.",
                by=COORDINATOR,
            )
            services.memory_store(
                project=project,
                agent_name="Juno",
                type="pattern",
                content="Every panel has a high-contrast variant for the wheelhouse.",
                by=COORDINATOR,
            )
        export(project)
        watch.canon("export after a coordinator's review and the agents' writes through Canon")

        done = scribe_pass(root, now=squad.iso(datetime.now(UTC)), affects=["marlow", "juno"])
        watch.scribe("the Scribe merges the inbox", done.removed)
        sync(project)
        watch.canon("sync after the Scribe")
        squad.nap(root)
        watch.nap()
        sync(project)
        watch.canon("sync after squad nap")

    assert "Sync service: contract v1 for" in (root / ".squad/decisions-archive.md").read_text(
        encoding="utf-8"
    )
    squad.scrub_emails(root)
    watch.scrub()
    assert "harbour-desk@" not in (root / ".squad/agents/juno/history.md").read_text(encoding="utf-8")
    sync(project)
    watch.canon("sync after squad scrub-emails")
