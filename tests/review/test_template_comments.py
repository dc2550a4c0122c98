"""A `{# … #}` comment is one line in Django: spread over two, it is shown to the reader as text."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
# An opened `{#` that is not closed on its own line.
UNCLOSED = re.compile(r"\{#(?:(?!#\}).)*$", re.MULTILINE)


def test_no_template_has_a_comment_over_several_lines():
    found = [
        f"{path.relative_to(ROOT)}:{text[: match.start()].count(chr(10)) + 1}"
        for path in sorted((ROOT / "templates").rglob("*.html"))
        for text in [path.read_text(encoding="utf-8")]
        for match in UNCLOSED.finditer(text)
    ]
    assert found == [], f"use {{% comment %}} for these: {found}"


def test_the_decision_forms_show_no_template_text(lead, decision):
    """ "Record a decision", "Edit the text" and "Supersede" all render the decision's fields."""
    for path in ("/p/alpha/decisions/", f"/p/alpha/decisions/{decision.pk}/"):
        page = lead.get(path).content.decode()
        assert "{#" not in page and "#}" not in page, path
        assert 'name="title"' in page
