"""Every form field on every dashboard page has a name of its own.

A field's accessible name comes from `aria-labelledby`, `aria-label`, a `<label for>` or a wrapping
`<label>`; a screen reader announces it and a person using voice control says it. Two fields named
alike on one page leave both unsure which field is which, so names are unique per page: fields
repeated on every row carry the row in their name ("Select Proposal 3", "Importance of memory 12").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

import pytest
from django.test import Client

from tests.pages import COORDINATOR, VIEWER, Seeded, pages, seed, unlisted_get_routes

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
# Controls whose own text (options, typed value) is no part of a label around them.
CONTROLS = {"input", "select", "textarea", "button"}
UNNAMED_INPUTS = {"hidden", "submit", "button", "reset", "image"}


@dataclass(eq=False)
class Node:
    tag: str
    attrs: dict[str, str]
    parent: Node | None = None
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        """The text inside, leaving out what form controls hold."""
        parts = [
            child if isinstance(child, str) else child.text()
            for child in self.children
            if isinstance(child, str) or child.tag not in CONTROLS | {"option"}
        ]
        return " ".join(parts)

    def walk(self) -> list[Node]:
        found = [self]
        for child in self.children:
            if isinstance(child, Node):
                found += child.walk()
        return found


class Tree(HTMLParser):
    """A forgiving DOM: an end tag closes up to its open element; stray end tags are ignored."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.open = [self.root]
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, parent=self.open[-1])
        self.open[-1].children.append(node)
        if tag not in VOID:
            self.open.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.open[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}, parent=self.open[-1]))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.open) - 1, 0, -1):
            if self.open[depth].tag == tag:
                del self.open[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.open[-1].children.append(data)


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def fields(html: str) -> list[tuple[Node, str]]:
    """Every form field a person fills in, with its accessible name ("" when it has none)."""
    nodes = Tree(html).root.walk()
    by_id = {node.attrs["id"]: node for node in nodes if "id" in node.attrs}
    labels_for: dict[str, list[Node]] = {}
    for node in nodes:
        if node.tag == "label" and node.attrs.get("for"):
            labels_for.setdefault(node.attrs["for"], []).append(node)
    named = []
    for node in nodes:
        if node.tag not in {"input", "select", "textarea"}:
            continue
        if node.tag == "input" and node.attrs.get("type", "text").lower() in UNNAMED_INPUTS:
            continue
        named.append((node, accessible_name(node, by_id, labels_for)))
    return named


def accessible_name(node: Node, by_id: dict[str, Node], labels_for: dict[str, list[Node]]) -> str:
    """aria-labelledby, else aria-label, else the labels that point at it or wrap it."""
    if node.attrs.get("aria-labelledby"):
        return squash(" ".join(by_id[i].text() for i in node.attrs["aria-labelledby"].split() if i in by_id))
    if squash(node.attrs.get("aria-label", "")):
        return squash(node.attrs["aria-label"])
    labels = list(labels_for.get(node.attrs.get("id", ""), [])) if node.attrs.get("id") else []
    ancestor = node.parent
    while ancestor is not None:
        if ancestor.tag == "label" and ancestor not in labels:
            labels.append(ancestor)
        ancestor = ancestor.parent
    return squash(" ".join(label.text() for label in labels))


def describe(node: Node) -> str:
    keep = ("type", "name", "id")
    return f"<{node.tag} " + " ".join(f'{k}="{node.attrs[k]}"' for k in keep if k in node.attrs) + ">"


def label_problems(html: str) -> list[str]:
    """Each field without a name, and each name two fields share."""
    problems, seen = [], {}
    for node, name in fields(html):
        if not name:
            problems.append(f"{describe(node)} has no accessible name")
            continue
        key = name.casefold()
        if key in seen:
            problems.append(f'{describe(seen[key])} and {describe(node)} are both named "{name}"')
        else:
            seen[key] = node
    return problems


@pytest.fixture
def seeded(project, other_project) -> Seeded:
    return seed(project, other_project)


def client_for(django_user_model, username: str | None) -> Client:
    client = Client()
    if username:
        client.force_login(django_user_model.objects.get(username=username))
    return client


@pytest.mark.parametrize("username", [COORDINATOR, VIEWER])
def test_every_field_on_every_page_has_a_name_of_its_own(seeded, django_user_model, username):
    member = client_for(django_user_model, username)
    anonymous = Client()
    problems, checked = [], 0
    for page in pages(seeded):
        response = (anonymous if page.anonymous else member).get(page.url)
        assert response.status_code in (200, 404), f"{page.label}: HTTP {response.status_code}"
        html = response.content.decode()
        checked += len(fields(html))
        problems += [f"{page.label} ({page.url}): {problem}" for problem in label_problems(html)]
    assert problems == [], "\n".join(problems)
    # The pages hold filters and forms: a check that found no field would prove nothing.
    assert checked > (150 if username == COORDINATOR else 40)


def test_every_page_of_the_dashboard_is_checked(seeded, django_user_model):
    """A page added to review/urls.py is added to tests/pages.py too, or its labels go unchecked."""
    assert unlisted_get_routes(seeded, client_for(django_user_model, COORDINATOR)) == []


def test_a_page_left_out_of_the_list_is_reported(seeded, django_user_model, monkeypatch):
    import tests.pages as catalogue

    listed = catalogue.pages
    monkeypatch.setattr(catalogue, "pages", lambda s: [p for p in listed(s) if p.route != "review:sessions"])
    assert unlisted_get_routes(seeded, client_for(django_user_model, COORDINATOR)) == ["review:sessions"]


@pytest.mark.parametrize(
    ("html", "problem"),
    [
        ('<input type="text" name="q">', "has no accessible name"),
        (
            '<label>Reason <input name="reason"></label><label>Reason <input name="other"></label>',
            "both named",
        ),
        ('<label for="a">Tags</label><input id="a"><input aria-label="tags">', "both named"),
        ('<select name="type"><option>Type</option></select>', "has no accessible name"),
        (
            '<span id="n">Title</span><textarea aria-labelledby="n"></textarea><input aria-label="Title">',
            "both",
        ),
    ],
)
def test_the_check_finds_unnamed_and_twice_named_fields(html, problem):
    problems = label_problems(html)
    assert len(problems) == 1 and problem in problems[0], problems


def test_the_check_names_fields_as_a_browser_does():
    html = (
        '<label>Type <select name="type"><option>Any type</option></select></label>'
        '<label for="i-1" class="sr">Importance of memory 1</label><select id="i-1"></select>'
        '<input type="checkbox" aria-label="Select Proposal 1"><input type="checkbox" aria-label="Select Proposal 2">'
        '<input type="hidden" name="next"><button type="submit">Go</button>'
        '<span id="h">Reason for</span><input aria-labelledby="h t"><span id="t">Proposal 1</span>'
    )
    assert [name for _, name in fields(html)] == [
        "Type",
        "Importance of memory 1",
        "Select Proposal 1",
        "Select Proposal 2",
        "Reason for Proposal 1",
    ]
    assert label_problems(html) == []
