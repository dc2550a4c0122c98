"""What the files are rendered from: the rows an export reads for their texts are what Django reads."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ledger import services
from ledger.mirror.sources import TEXT_FIELDS, Sources, moment
from ledger.models import AgentMemory, Decision, InboxEntry, Project

# A time with microseconds, one without (SQLite stores it with no fraction), and one long ago.
TIMES = [
    datetime(2026, 11, 27, 7, 35, 51, 123456, tzinfo=UTC),
    datetime(2026, 2, 1, 0, 0, 0, tzinfo=UTC),
    datetime(1999, 12, 31, 23, 59, 59, 1, tzinfo=UTC),
]


def _rows(project: Project) -> list[Decision | AgentMemory | InboxEntry]:
    decision = services.decision_create(
        project=project, agent_name="Rhodes", type="scope", title="Ünïcode 🦀", content="Body.", by="lead"
    )
    memory = services.memory_record(project=project, agent_name="Rhodes", type="learning", content="Learnt.")
    submitted = services.entry_submit(
        project=project, agent_name="Rhodes", slug="one", type="scope", content="New."
    )
    return [decision, memory, submitted.entry]


@pytest.mark.parametrize("when", TIMES)
def test_the_rows_read_for_their_texts_are_what_django_reads(project: Project, when: datetime) -> None:
    for row in _rows(project):
        model = type(row)
        model.objects.filter(pk=row.pk).update(created_at=when)
        expected = model.objects.get(pk=row.pk)

        read = Sources(project).models(model, [row.pk])[row.pk]

        for name in TEXT_FIELDS[model]:
            if name == "agent__name":
                assert read.agent.name == expected.agent.name == "Rhodes"
            else:
                assert getattr(read, name) == getattr(expected, name), name
        assert read.created_at == when
        assert read.created_at.utcoffset() is not None and read.created_at.utcoffset().total_seconds() == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-27 07:35:51.123456", datetime(2026, 11, 27, 7, 35, 51, 123456, tzinfo=UTC)),
        ("2026-11-27 07:35:51+00", datetime(2026, 11, 27, 7, 35, 51, tzinfo=UTC)),
        ("2026-11-27 09:35:51.5+02", datetime(2026, 11, 27, 7, 35, 51, 500000, tzinfo=UTC)),
    ],
)
def test_a_time_read_as_text_is_the_same_moment_in_utc(text: str, expected: datetime) -> None:
    found = moment(text)
    assert found == expected
    assert found.tzinfo is UTC
