"""Quick checks of the Squad folder fixtures themselves (no database)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.squad_fixtures import (
    INBOX_SHAPES,
    SHAPES,
    SquadTeam,
    assert_lines_kept,
    crlf,
    lines_of,
    person_adds_bullet,
    scribe_append,
    scribe_merge_inbox,
    write_squad_team,
)

HEADINGS = {
    "dated": re.compile(r"^### \d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}Z)?: (?!User directive)", re.M),
    "pacific": re.compile(r"^### \d{4}-\d{2}-\d{2} PT — [^:\n]+: ", re.M),
    "directive": re.compile(r"^### \d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}Z)?: User directive$", re.M),
    "decision": re.compile(r"^# Decision: ", re.M),
}


def _outside_fences(text: str) -> str:
    return re.sub(r"^```.*?^```$", "", text, flags=re.M | re.S)


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> SquadTeam:
    return write_squad_team(tmp_path_factory.mktemp("squad"))


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path) -> None:
    a = write_squad_team(tmp_path / "a", log_lines=300, agents=5, seed=7)
    b = write_squad_team(tmp_path / "b", log_lines=300, agents=5, seed=7)
    c = write_squad_team(tmp_path / "c", log_lines=300, agents=5, seed=8)
    assert a.files == b.files
    assert a.files[".squad/decisions.md"] != c.files[".squad/decisions.md"]
    for key, data in a.files.items():
        assert (tmp_path / "a" / key).read_bytes() == data


def test_decisions_md_is_long_and_holds_every_shape(team: SquadTeam) -> None:
    text = team.decisions_path.read_text(encoding="utf-8")
    assert text.count("\n") >= 2000
    assert text.startswith("# Squad Decisions\n\n## Active Decisions\n")
    outside = _outside_fences(text)
    for shape in SHAPES:
        assert len(HEADINGS[shape].findall(outside)) == team.shape_counts[shape] > 0, shape
    assert sum(team.shape_counts.values()) == team.decision_blocks == len(team.titles)
    for status in (
        "Active",
        "Adopted",
        "Accepted",
        "Implemented",
        "Applied (partial)",
        "Proposed",
        "Superseded",
    ):
        assert f"**Status:** {status}\n" in text, status
    assert "**Status:** Active directive\n" in text
    assert "**By:** user (via Copilot)\n" in text
    assert "**Type:** architectural\n" in text
    for label in ("**Date:**", "**Author:**", "**By:**", "**What:**", "**Why:**"):
        assert label in text
    for heading in ("## Decision\n", "## Why\n", "## Context\n", "## Rationale\n"):
        assert heading in text
    assert "|---|---|---|" in text
    assert re.search(r"^  - .+\n    - ", text, re.M)  # nested list
    assert re.search(r"^```markdown\n### 2026-01-01: .*\n(.*\n)*?---\n(.*\n)*?```$", text, re.M)
    assert any(len(line) > 300 for line in text.split("\n"))
    assert "Zo\u00eb" in text or "\u0141ucja" in text or "S\u00f8ren" in text
    assert re.search(r"[\u0590-\u05ff\u0600-\u06ff]", text)
    assert "✅" in text or "🚀" in text or "⚠️" in text
    # Stretches with and without `---` between blocks.
    assert "\n\n---\n\n### " in text
    assert re.search(r"^\*\*Why:\*\* .*\n\n### ", text, re.M)
    # No front matter, newest first.
    assert not text.startswith("---")
    # (Pacific headings carry a local date, which may sit a day off its UTC neighbours.)
    days = re.findall(
        r"^#{1,3} (?:Decision: .*\n(?:.*\n)*?\*\*Date:\*\* )?(\d{4}-\d{2}-\d{2})(?! PT)", outside, re.M
    )
    assert len(days) == team.decision_blocks - team.shape_counts["pacific"]
    assert days == sorted(days, reverse=True)


def test_twenty_histories_and_charters(team: SquadTeam) -> None:
    assert len(team.agents) == 20
    assert team.agents[:3] == ["marlow", "juno", "kestrel"]
    histories = [team.history_path(agent).read_text(encoding="utf-8") for agent in team.agents]
    for agent, text in zip(team.agents, histories, strict=True):
        assert agent == agent.lower()
        assert (team.folder / "agents" / agent / "charter.md").is_file()
        for heading in ("# Project Context\n", "## Core Context\n", "## Recent Updates\n", "## Learnings\n"):
            assert heading in text, (agent, heading)
        assert re.search(r"^📌 .*\d{4}-\d{2}-\d{2}.* — ", text, re.M)
    lengths = [text.count("\n") for text in histories]
    assert sum(n >= 200 for n in lengths) >= 3
    assert min(lengths) < 60
    joined = "\n".join(histories)
    assert re.search(r"^\*\*[^*]+:\*\*$", joined, re.M)  # `**Title:**` on its own line
    assert re.search(r"^- .+\n  \S", joined, re.M)  # bullet with an indented continuation
    assert "## Open Questions\n" in joined
    assert re.search(r"^### ", joined, re.M)


def test_now_md_has_front_matter(team: SquadTeam) -> None:
    text = (team.folder / "identity" / "now.md").read_text(encoding="utf-8")
    _, front, body = text.split("---\n", 2)
    meta = yaml.safe_load(front)
    assert set(meta) == {"updated_at", "focus_area", "active_issues"}
    assert meta["active_issues"][0].startswith("#41 ")
    assert "# What We're Focused On" in body


def test_inbox_files_in_every_shape(team: SquadTeam) -> None:
    inbox = team.folder / "decisions" / "inbox"
    names = sorted(p.name for p in inbox.iterdir())
    assert names == team.inbox_files
    assert len(names) == 2 * len(INBOX_SHAPES)
    texts = {name: (inbox / name).read_text(encoding="utf-8") for name in names}
    assert all(not text.startswith("---") for text in texts.values())
    agents = set(team.agents)
    for name in names:
        first = name.split("-")[0]
        if first == "copilot":
            assert re.fullmatch(r"copilot-directive-\d{8}T\d{6}Z\.md", name)
        else:
            assert first in agents
    firsts = [text.split("\n", 1)[0] for text in texts.values()]
    assert sum(line.startswith("# Decision: ") for line in firsts) == 2
    assert sum(bool(re.match(r"# \w+ — ", line)) for line in firsts) == 2
    assert sum("\nOwner: " in text and "\nRequested by: " in text for text in texts.values()) == 2
    assert sum(line.endswith(": User directive") for line in firsts) == 2
    assert sum(bool(re.match(r"### \d{4}-\d{2}-\d{2}: (?!User)", line)) for line in firsts) == 2
    assert sum(line == "## Context" for line in firsts) == 2
    joined = "\n".join(texts.values())
    for reason in ("## Rationale", "## Why", "**Why:**", "**Rationale:**"):
        assert reason in joined
    for other in ("team.md", "routing.md", "ceremonies.md"):
        assert (team.folder / other).is_file()
    assert json.loads((team.folder / "config.json").read_text(encoding="utf-8"))["version"] == 1
    assert any(key.startswith(".squad/log/") for key in team.files)
    assert any(key.startswith(".squad/orchestration-log/") for key in team.files)


def test_small_log_other_layout_no_inbox(tmp_path: Path) -> None:
    team = write_squad_team(tmp_path, layout=".ai-team", log_lines=40, agents=3, inbox=False, seed=3)
    assert team.folder == tmp_path / ".ai-team"
    assert all(count > 0 for count in team.shape_counts.values())
    assert not (team.folder / "decisions" / "inbox").exists()
    assert team.inbox_files == []
    assert all(key.startswith(".ai-team/") for key in team.files)


def test_crlf(tmp_path: Path) -> None:
    team = write_squad_team(tmp_path, log_lines=100, agents=2, seed=2)
    crlf(team.decisions_path)
    data = team.decisions_path.read_bytes()
    assert b"\r\n" in data
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert lines_of(data) == lines_of(team.original(team.decisions_path))
    crlf(team.decisions_path)
    assert team.decisions_path.read_bytes() == data


@pytest.mark.parametrize("newest_first", [True, False])
def test_scribe_append_placement(tmp_path: Path, newest_first: bool) -> None:
    team = write_squad_team(tmp_path, log_lines=200, agents=4, seed=5, newest_first=newest_first)
    before = team.decisions_path.read_bytes()
    block = scribe_append(
        team, title="Adopt the ledger", author="Kestrel (Lead)", body="**What:** Adopt it.", date="2026-03-07"
    )
    assert block == "### 2026-03-07: Adopt the ledger\n**By:** Kestrel (Lead)\n**What:** Adopt it.\n"
    after = team.decisions_path.read_bytes()
    assert_lines_kept(before, after)
    text = after.decode()
    lines = lines_of(after)
    first_block = next(i for i, line in enumerate(lines) if re.match(r"#{1,3} (\d{4}|Decision:)", line))
    if newest_first:
        assert lines[first_block] == "### 2026-03-07: Adopt the ledger"
        assert text.index(block) < text.index(team.titles[0])
        assert text[text.index(block) + len(block) :].startswith("\n---\n\n")
    else:
        assert text.endswith("\n\n---\n\n" + block)


def test_scribe_append_without_separators_and_crlf(tmp_path: Path) -> None:
    team = write_squad_team(tmp_path, log_lines=150, agents=3, seed=6, separators="never")
    assert "\n---\n" not in _outside_fences(team.decisions_path.read_text(encoding="utf-8"))
    crlf(team.decisions_path)
    before = team.decisions_path.read_bytes()
    scribe_append(team, title="T", author="A", body="B", date="2026-03-07")
    after = team.decisions_path.read_bytes()
    assert b"### 2026-03-07: T\r\n**By:** A\r\nB\r\n\r\n" in after
    assert b"\n" not in after.replace(b"\r\n", b"")
    assert_lines_kept(before, after)


def test_scribe_merge_inbox(tmp_path: Path) -> None:
    team = write_squad_team(tmp_path, log_lines=120, agents=6, seed=4)
    before = team.decisions_path.read_bytes()
    for name in team.inbox_files:
        source = team.inbox_path(name).read_text(encoding="utf-8")
        block = scribe_merge_inbox(team, name)
        assert block.startswith("### ")
        assert "**By:** " in block
        assert not team.inbox_path(name).exists()
        assert_lines_kept(source.split("\n", 1)[1].encode(), block.encode())
    after = team.decisions_path.read_bytes()
    assert_lines_kept(before, after)
    assert len(lines_of(after)) > len(lines_of(before))


def test_person_adds_bullet(tmp_path: Path) -> None:
    team = write_squad_team(tmp_path, log_lines=60, agents=3, seed=9)
    path = team.history_path("juno")
    before = path.read_bytes()
    line = person_adds_bullet(tmp_path, "juno", "Core Context", "Prefers small pull requests.")
    assert line == "- Prefers small pull requests."
    text = path.read_text(encoding="utf-8")
    section = text.split("## Core Context\n", 1)[1].split("\n## ", 1)[0]
    assert section.rstrip("\n").endswith("\n" + line)
    assert_lines_kept(before, path.read_bytes())
    person_adds_bullet(tmp_path, "juno", "Learnings", "Last one.")
    learnings = path.read_text(encoding="utf-8").split("## Learnings\n", 1)[1].split("\n## ", 1)[0]
    assert learnings.rstrip("\n").endswith("\n- Last one.")
    with pytest.raises(KeyError):
        person_adds_bullet(tmp_path, "juno", "Nope", "x")


def test_assert_lines_kept() -> None:
    before = b"# T\n\nalpha\nbeta\n\ngamma\n"
    assert_lines_kept(before, b"# T\nnew\nalpha\r\nbeta\n\n\ngamma\nmore\n")
    with pytest.raises(AssertionError, match=r"old line 4 is missing.*'beta'"):
        assert_lines_kept(before, b"# T\nalpha\ngamma\n")
    with pytest.raises(AssertionError, match=r"old line 6 is out of order.*'gamma'"):
        assert_lines_kept(before, b"# T\ngamma\nalpha\nbeta\n")
