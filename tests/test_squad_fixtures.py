"""Quick checks of the Squad folder fixtures themselves (no database)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.squad_fixtures import (
    DAY_SHAPES,
    FIXTURES,
    HISTORY_STYLES,
    INBOX_SHAPES,
    LOG_STYLES,
    RICH_SHAPES,
    SHAPES,
    SquadTeam,
    assert_lines_kept,
    crlf,
    lines_of,
    person_adds_bullet,
    scribe_append,
    scribe_merge_inbox,
    write_fixture,
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


# --- the named fixtures: every shape people and Squad's own code write ---------------------------------


def _fenced_lines(text: str) -> list[str]:
    """The lines inside fenced code (``` or ~~~, longer fences hold shorter ones), fences excluded."""
    inside: list[str] = []
    fence = ""
    for line in text.split("\n"):
        opened = re.match(r"(`{3,}|~{3,})", line)
        if fence:
            marker = opened.group(1) if opened and line.strip() == opened.group(1) else ""
            if marker[:1] == fence[0] and len(marker) >= len(fence):
                fence = ""
                continue
            inside.append(line)
        elif opened:
            fence = opened.group(1)
    return inside


def _section(text: str, heading: str) -> str:
    """The text under `heading` (a whole line) up to the next heading of its level or higher."""
    level = len(heading) - len(heading.lstrip("#"))
    rest = text.split("\n" + heading + "\n", 1)[1]
    following = re.search(rf"^#{{1,{level}}} ", rest, re.M)
    return rest[: following.start()] if following else rest


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SquadTeam]:
    root = tmp_path_factory.mktemp("named")
    return {name: write_fixture(root / str(i), name) for i, name in enumerate(FIXTURES)}


@pytest.mark.parametrize("name", FIXTURES)
def test_each_named_fixture_is_the_same_for_a_seed_and_differs_for_another(tmp_path: Path, name: str) -> None:
    a = write_fixture(tmp_path / "a", name, seed=4)
    b = write_fixture(tmp_path / "b", name, seed=4)
    c = write_fixture(tmp_path / "c", name, seed=5)
    assert a.files == b.files
    assert a.files[".squad/decisions.md"] != c.files[".squad/decisions.md"]


def test_the_default_team_is_the_default_arguments(fixtures: dict[str, SquadTeam], tmp_path: Path) -> None:
    assert fixtures["default team"].files == write_squad_team(tmp_path).files


def test_unknown_styles_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="log must be one of"):
        write_squad_team(tmp_path, log="wiki")
    with pytest.raises(ValueError, match="histories must be one of"):
        write_squad_team(tmp_path, histories="diary")
    with pytest.raises(ValueError, match="three agents"):
        write_squad_team(tmp_path, odd_bytes=True, agents=2)
    assert set(FIXTURES) >= {"default team", "dated log", "day sections", "Squad-written", "casting"}
    assert {options.get("log", "scribe") for options in FIXTURES.values()} == set(LOG_STYLES)
    assert {options.get("histories", "census") for options in FIXTURES.values()} == set(HISTORY_STYLES)


def test_dated_log_blocks_hold_rules_sub_headings_tables_lists_and_code(
    fixtures: dict[str, SquadTeam],
) -> None:
    team = fixtures["dated log"]
    text = team.decisions_path.read_text(encoding="utf-8")
    assert set(team.shape_counts) == set(RICH_SHAPES) and all(team.shape_counts.values())
    assert re.search(r"^### \d{4}-\d{2}-\d{2} — [A-Z][a-z ]+: option \([abc]\)$", text, re.M)
    assert re.search(r"^### \d{4}-\d{2}-\d{2}: Bump \w+: \d+\.\d+", text, re.M)
    # A rule inside a block, with the block's sections after it.
    assert re.search(r"^\|---\|---\|---\|\n(\|.*\n)+\n---\n\n## Decision\n", text, re.M)
    # A rule inside a block, with a later paragraph after it and no heading.
    assert re.search(r"^(---|\*\*\*)\n\n(\*\*Update \(|_Follow-up, )\d{4}-", text, re.M)
    assert re.search(
        r"^### \d{4}-\d{2}-\d{2}: .*\n\n\*\*Author:\*\* .*\n\*\*Date:\*\* \d{4}-\d{2}-\d{2}\n", text, re.M
    )
    assert "\n### Details\n" in text and "\n## Context\n" in text and "\n## Rationale\n" in text
    assert re.search(r"^## [A-Z].*\n\n\*\*Date:\*\* \d{4}-\d{2}  \n\*\*By:\*\* .+  \n", text, re.M)
    assert re.search(r"^- \[x\] ", text, re.M) and re.search(r"^- \[ \] ", text, re.M)
    assert "\n> **Note:** " in text
    fenced = _fenced_lines(text)
    assert any(line.startswith("# ") for line in fenced)
    assert any(re.match(r"#{2,3} ", line) for line in fenced)
    assert not text.startswith("---")


def test_a_day_section_holds_twenty_decisions_without_dates(fixtures: dict[str, SquadTeam]) -> None:
    team = fixtures["day sections"]
    text = team.decisions_path.read_text(encoding="utf-8")
    days = re.findall(r"^## (\d{4}-\d{2}-\d{2})$", text, re.M)
    assert days[0] == "2026-06-08" and len(days) >= 4 and days == sorted(days, reverse=True)
    first = _section(text, "## 2026-06-08")
    headings = re.findall(r"^### (.+)$", first, re.M)
    assert len(headings) == 20
    assert not any(re.match(r"\d{4}-", heading) for heading in headings)
    assert len(re.findall(r"^### ", text, re.M)) == team.decision_blocks
    assert set(team.shape_counts) == set(DAY_SHAPES) and all(team.shape_counts.values())


def test_squad_written_log_archive_and_inbox(fixtures: dict[str, SquadTeam]) -> None:
    team = fixtures["Squad-written"]
    text = team.decisions_path.read_text(encoding="utf-8")
    assert text.startswith(
        "# Squad Decisions\n\n## Active Decisions\n\nNo decisions recorded yet.\n\n## Governance\n"
    )
    stamped = re.findall(r"^### (\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}): \S", text, re.M)
    assert len(stamped) == team.shape_counts["squad-decide"] > 0
    # squad_decide writes no blank lines: **By:** follows the heading, **Why:** ends the block.
    assert re.search(
        r"^### \S+: .*\n\*\*By:\*\* \w+\n\*\*What:\*\* .*\n(\*\*References:\*\* .*\n)?\*\*Why:\*\* ",
        text,
        re.M,
    )
    # `squad nap` appended memory-write files verbatim, front matter and all.
    fronts = re.findall(r"^---\n(id: .*?)\n---\n", text, re.M | re.S)
    assert len(fronts) == team.shape_counts["memory-write"] > 0
    for front in fronts:
        meta = yaml.safe_load(front)
        assert set(meta) == {"id", "class", "loadGuidance", "title", "author", "createdAt", "metadata"}
        assert (meta["class"], meta["loadGuidance"], meta["metadata"]) == ("DECISION", ["ALWAYS"], {})
    assert text.endswith("\n") and not text.endswith("\n\n")

    inbox = {name: team.inbox_path(name).read_text(encoding="utf-8") for name in team.inbox_files}
    decided = [body for body in inbox.values() if body.startswith("### ")]
    written = {name: body for name, body in inbox.items() if body.startswith("---\n")}
    assert len(decided) == len(written) == 2
    for body in decided:
        assert re.match(r"### \d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}: ", body)
        assert not body.endswith("\n") and "\n\n" not in body
    for name, body in written.items():
        meta = yaml.safe_load(body.split("---\n")[1])
        assert name.startswith(meta["author"] + "-") and name.endswith(f"-{meta['id'][:8]}.md")

    archive = team.archive_path.read_text(encoding="utf-8")
    archived = re.findall(r"^### (\d{4}-\d{2}-\d{2})", archive, re.M)
    assert archived and max(archived) < min(stamped)[:10]
    assert "decisions.md merge=union" in (team.root / ".gitattributes").read_text(encoding="utf-8")
    assert ".squad/decisions/inbox/" in (team.root / ".gitignore").read_text(encoding="utf-8")

    histories = [team.history_path(agent).read_text(encoding="utf-8") for agent in team.agents]
    for history in histories:
        for heading in ("# Project Context\n", "## Core Context\n", "## Recent Updates\n", "## Learnings\n"):
            assert heading in history
        assert "\n📌 Team initialized on 2026-08-17\n" in history
        assert re.search(r"\n📌 Team update \(\d{4}-\d{2}-\d{2}T[\d:]+Z\): .+ — decided by \w+\n\Z", history)
    assert any(re.search(r"^### \d{4}-\d{2}-\d{2}\n\n\S", history, re.M) for history in histories)


def test_dated_histories_in_every_shape_squad_memory_and_people_write(fixtures: dict[str, SquadTeam]) -> None:
    team = fixtures["histories dated"]
    first = team.history_path(team.agents[0]).read_text(encoding="utf-8")
    assert first.startswith("# Project Context\n\n- **Project:** ")
    assert re.search(r"^## Learnings — \d{4}-\d{2}-\d{2}: [A-Z]", first, re.M)
    learnings = _section(first, "## Learnings")
    assert "<!-- Append learnings below -->" in learnings
    assert re.search(r"^### \d{4}-\d{2}-\d{2}\n\n\S", learnings, re.M)
    assert re.search(r"^### \d{4}-\d{2}-\d{2} — [A-Z].*\n\n\*\*Verdict:\*\* ", learnings, re.M)
    for section in ("## Decisions", "## Context"):
        assert re.match(r"\n### \d{4}-\d{2}-\d{2}\n\n\S", _section(first, section))
    lines = first.rstrip("\n").split("\n")
    assert re.fullmatch(r"📌 Team update \(\d{4}-\d{2}-\d{2}T[\d:]+Z\): .+ — decided by \w+", lines[-1])
    assert [line for line in lines if line.startswith("## ")][-1] == "## Patterns"


def test_casting_histories(fixtures: dict[str, SquadTeam]) -> None:
    team = fixtures["casting"]
    for i, agent in enumerate(team.agents):
        text = team.history_path(agent).read_text(encoding="utf-8")
        name = agent[0].upper() + agent[1:]
        skeleton = f"# {name} — History\n\n## Core Context\n\n"
        assert text.startswith(skeleton), agent
        assert "\n## Learnings\n\n<!-- Append learnings below -->\n" in text
        after = text.split("<!-- Append learnings below -->\n", 1)[1]
        assert (after == "") == (i == 0), agent


def test_odd_bytes(fixtures: dict[str, SquadTeam]) -> None:
    team = fixtures["odd bytes"]
    data = team.decisions_path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf# Squad Decisions\r\n")
    assert b"\n" not in data.replace(b"\r\n", b"")
    text = data.decode("utf-8")
    for odd in ("e\u0308", "\u05e9", "\u200d", "\u2028", "\u0085", "\u200f"):
        assert odd in text, repr(odd)
    first, second, third = (team.history_path(agent).read_bytes() for agent in team.agents[:3])
    assert first.startswith(b"\xef\xbb\xbf# Project Context\r\n") and b"\n" not in first.replace(b"\r\n", b"")
    assert second.count(b"\x00") == 1
    [line] = [line for line in second.split(b"\n") if b"\x00" in line]
    assert b"\x01" in line and b"\x1b[" in line
    assert not third.endswith(b"\n") and "\u2028".encode() in third and "e\u0308".encode() in third


def test_long_files(fixtures: dict[str, SquadTeam]) -> None:
    team = fixtures["long files"]
    assert team.decisions_path.read_text(encoding="utf-8").count("\n") >= 2000
    assert len(team.history_path(team.agents[0]).read_bytes()) >= 60 * 1024
