"""A `{# … #}` comment is one line in Django: spread over two, it is shown to the reader as text.

The scan reads each template the way Django does (its own `Lexer`), so it finds what Django would show
as text, in every template directory of the project Django loads from (`DIRS` and the apps'
`templates/` folders), whatever the file's extension. The comment that once reached the decision
forms (a `{#` on one line, its `#}` on the next) is the scan's own check that it finds one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from django.conf import settings
from django.template import engines
from django.template.base import Lexer, TokenType
from django.template.utils import get_app_template_dirs

ROOT = Path(settings.BASE_DIR).resolve()
# Tags whose content Django never reads as template text.
VERBATIM = {"comment": "endcomment", "verbatim": "endverbatim"}
# What reached the decision forms until the comment was made a `{% comment %}`.
SHOWN_ONCE = """{# A decision's fields, filled from `form` (as typed, or its initial values).
   `of` names whose fields they are. #}
{% if form.type %}<label>Type</label>{% endif %}
"""


def template_files() -> list[Path]:
    """Every file under a template directory of the project (not of installed packages)."""
    engine = engines["django"].engine  # type: ignore[attr-defined]
    folders = {Path(folder).resolve() for folder in [*engine.dirs, *get_app_template_dirs("templates")]}
    ours = [folder for folder in folders if folder.is_relative_to(ROOT) and ".venv" not in folder.parts]
    return sorted(path for folder in ours for path in folder.rglob("*") if path.is_file())


def comments_shown(text: str) -> Iterator[int]:
    """The lines where a comment's `{#` or `#}` would be shown as text."""
    closing = ""
    for token in Lexer(text).tokenize():
        if closing:
            if token.token_type is TokenType.BLOCK and token.contents.split()[:1] == [closing]:
                closing = ""
            continue
        if token.token_type is TokenType.BLOCK:
            closing = VERBATIM.get(token.contents.split()[0] if token.contents else "", "")
        elif token.token_type is TokenType.TEXT:
            marks = [at for at in (token.contents.find("{#"), token.contents.find("#}")) if at >= 0]
            if marks:
                yield (token.lineno or 1) + token.contents.count("\n", 0, min(marks))


def test_the_scan_reads_every_template_folder_of_the_project():
    files = {path.relative_to(ROOT).as_posix() for path in template_files()}
    assert {"templates/base.html", "templates/review/_decision_fields.html"} <= files


def test_the_scan_finds_a_comment_spread_over_two_lines_and_nothing_else():
    assert list(comments_shown(SHOWN_ONCE)) == [1]
    assert list(comments_shown("<p>\n" + SHOWN_ONCE)) == [2]
    assert list(comments_shown("{# one line #}\n{% comment %}\n{# inside #}\n{% endcomment %}\n")) == []


def test_no_template_has_a_comment_over_several_lines():
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in template_files()
        for line in comments_shown(path.read_text(encoding="utf-8"))
    ]
    assert found == [], f"use {{% comment %}} for these: {found}"


def test_the_decision_forms_show_no_template_text(lead, decision):
    """ "Record a decision", "Edit the text" and "Supersede" all render the decision's fields."""
    for path in ("/p/alpha/decisions/", f"/p/alpha/decisions/{decision.pk}/"):
        page = lead.get(path).content.decode()
        assert "{#" not in page and "#}" not in page, path
        assert 'name="title"' in page
