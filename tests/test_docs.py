"""The README is the newcomer's manual: every setting and command it should mention, it does."""

from __future__ import annotations

import re
from pathlib import Path

from django.conf import settings

ROOT = Path(settings.BASE_DIR)
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_opens_with_the_two_commands():
    head = README[:1500]
    assert "make run" in head and "make test" in head


def test_every_environment_variable_read_by_settings_is_documented():
    source = (ROOT / "config" / "settings.py").read_text(encoding="utf-8")
    names = set(re.findall(r'env_(?:bool|int|list)\("([A-Z_]+)"', source))
    names |= set(re.findall(r'os\.environ\.get\("([A-Z_]+)"', source))
    missing = sorted(name for name in names if f"`{name}`" not in README)
    assert not missing, f"undocumented settings: {missing}"


def test_every_management_command_is_documented():
    commands = [
        p.stem for p in (ROOT / "ledger" / "management" / "commands").glob("*.py") if p.stem != "__init__"
    ]
    commands += [
        p.stem for p in (ROOT / "review" / "management" / "commands").glob("*.py") if p.stem != "__init__"
    ]
    missing = sorted(c for c in commands if f"`{c}" not in README and f"manage.py {c}" not in README)
    assert not missing, f"undocumented commands: {missing}"


def test_every_image_the_readme_shows_exists():
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README)
    assert images, "the README shows the dashboard"
    assert [path for path in images if not (ROOT / path).is_file()] == []
