"""How much of a Squad team's files adoption reads into rows, for every shape of team folder we know.

    python bench/adoption.py                          # every fixture
    python bench/adoption.py --fixture "day sections" --seed 3

Writes each named fixture of tests/squad_fixtures.py (`FIXTURES`: the default team, "dated log",
"day sections", "Squad-written", "histories dated", "casting", "odd bytes", "long files") into a
temporary folder and reads its `decisions.md`, `decisions-archive.md` and `agents/*/history.md` with the
parsers adoption uses (`parse_decisions`, `parse_history`). Prints, per file, the non-blank lines read
into rows out of the lines counted, the share, and why the rest was kept as text
(`ledger.mirror.squad.coverage`); then one summary line per fixture. No database: parsers only.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import _setup  # noqa: F401  (puts the project, not bench/, first on the import path)

# A file below this share is marked in the output; tests/ledger/test_adoption_coverage.py asks for it.
TARGET = 0.95


@dataclass(frozen=True)
class FileFigures:
    path: str
    kind: str  # "log" or "history"
    rows: int
    counted: int
    share: float
    description: str
    kept: str


def setup_django() -> None:
    """Django configured without a database: the parsers live in a package that imports the models."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # Production settings (DEBUG off) need a secret key; nothing here is signed or stored.
    os.environ.setdefault("DJANGO_SECRET_KEY", secrets.token_urlsafe(50))
    import django

    django.setup()


def measure(folder: Path) -> list[FileFigures]:
    """The figures of every log and history under a team folder (`.squad/`), logs first."""
    from ledger.mirror.squad import coverage, parse_decisions, parse_history

    found = [(name, "log") for name in ("decisions.md", "decisions-archive.md") if (folder / name).is_file()]
    found += [
        (path.relative_to(folder).as_posix(), "history")
        for path in sorted(folder.glob("agents/*/history.md"))
    ]
    figures = []
    for name, kind in found:
        text = (folder / name).read_bytes().decode("utf-8")
        parts = parse_decisions(text) if kind == "log" else parse_history(text)
        report = coverage.line_report(parts)
        kept = ", ".join(f"{n} {reason}" for reason, n in report.kept.items())
        figures.append(
            FileFigures(name, kind, report.rows, report.counted, report.share, report.describe(), kept)
        )
    return figures


def total(figures: list[FileFigures], kind: str) -> str:
    chosen = [f for f in figures if f.kind == kind]
    if not chosen:
        return f"no {kind}s"
    rows = sum(f.rows for f in chosen)
    counted = sum(f.counted for f in chosen)
    share = rows / counted if counted else 1.0
    files = f"{len(chosen)} {kind}" + ("s" if len(chosen) != 1 and kind == "log" else "")
    if kind == "history" and len(chosen) != 1:
        files = f"{len(chosen)} histories"
    return f"{files} {share:6.1%} ({rows:,} of {counted:,} lines)"


def report(name: str, figures: list[FileFigures], seconds: float) -> None:
    print(name)
    width = max(len(f.path) for f in figures)
    for f in figures:
        mark = " " if f.share >= TARGET else "<"
        kept = f"   kept as text: {f.kept}" if f.kept else ""
        print(f"  {f.path:<{width}}  {f.rows:>6,} / {f.counted:<6,} {f.share:6.1%} {mark}{kept}")
    under = sum(1 for f in figures if f.share < TARGET)
    print(
        f"  = {name}: {total(figures, 'log')}; {total(figures, 'history')}; "
        f"{under} of {len(figures)} files under {TARGET:.0%}; parsed in {seconds:.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--fixture", action="append", help="a name from FIXTURES (repeatable); all by default"
    )
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    setup_django()
    from tests.squad_fixtures import FIXTURES, write_fixture

    names = args.fixture or list(FIXTURES)
    unknown = [name for name in names if name not in FIXTURES]
    if unknown:
        raise SystemExit(f"unknown fixture {unknown[0]!r}; known: {', '.join(FIXTURES)}")
    root = Path(tempfile.mkdtemp(prefix="canon-bench-adoption-"))
    try:
        for i, name in enumerate(names):
            team = write_fixture(root / str(i), name, seed=args.seed)
            started = time.perf_counter()
            figures = measure(team.folder)
            report(name, figures, time.perf_counter() - started)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
