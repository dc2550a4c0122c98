"""The README is the newcomer's page, and docs/ the manual and the contract: every setting, command, route
and page they should mention, they do; the README stays short enough to read first."""

from __future__ import annotations

import re
from pathlib import Path

from django.conf import settings

from ledger.api import api
from ledger.mcp.server import build_server
from tests.threads import run_async

ROOT = Path(settings.BASE_DIR)
README = (ROOT / "README.md").read_text(encoding="utf-8")
CONFIGURATION = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")


def test_readme_opens_with_the_two_commands():
    head = README[:1500]
    assert "make run" in head and "make test" in head


def test_every_environment_variable_read_by_settings_is_documented():
    source = (ROOT / "config" / "settings.py").read_text(encoding="utf-8")
    names = set(re.findall(r'env_(?:bool|int|list)\("([A-Z_]+)"', source))
    names |= set(re.findall(r'os\.environ\.get\("([A-Z_]+)"', source))
    missing = sorted(name for name in names if f"| `{name}` |" not in CONFIGURATION)
    assert not missing, f"settings without a row in docs/configuration.md: {missing}"


def test_the_readme_is_what_a_newcomer_needs_first():
    """What Canon is, the two commands, a screenshot, connecting an agent, where each page is: the
    reference (settings, load figures, choices) lives in docs/."""
    sections = re.findall(r"(?m)^## (.+)$", README)
    assert sections[0] == "Two commands"
    assert "Connect your agents (MCP)" in sections and sections[-1] == "Documentation"
    assert "| `DATABASE_URL` |" not in README
    assert len(README.splitlines()) < 250


def test_every_image_the_readme_shows_exists():
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README)
    assert images, "the README shows the dashboard"
    assert [path for path in images if not (ROOT / path).is_file()] == []


# ---------------------------------------------------------------------------------------------
# docs/: the contract in the repository's own words

DOCS = ROOT / "docs"
# Where the code, the help texts and the README point readers to a page of docs/.
POINTING = [ROOT / "ledger", ROOT / "review", ROOT / "config", ROOT / "templates", ROOT / "README.md"]
TEXT_SUFFIXES = {".py", ".html", ".md", ".txt", ".js", ".css"}


def _files_pointing_to_docs() -> list[Path]:
    files: list[Path] = []
    for place in POINTING:
        found = [place] if place.is_file() else sorted(place.rglob("*"))
        files += [path for path in found if path.is_file() and path.suffix in TEXT_SUFFIXES]
    return files


def _doc(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def test_every_docs_page_the_code_points_to_exists():
    pointers: dict[str, list[str]] = {}
    for path in _files_pointing_to_docs():
        for name in re.findall(r"docs/([A-Za-z0-9_-]+\.md)", path.read_text(encoding="utf-8")):
            pointers.setdefault(name, []).append(str(path.relative_to(ROOT)))
    assert {"ledger.md", "api.md", "compiler.md", "commands.md", "dashboard.md"} <= set(pointers)
    missing = {name: files for name, files in sorted(pointers.items()) if not (DOCS / name).is_file()}
    assert not missing, f"pages pointed to but absent from docs/: {missing}"


def test_every_management_command_has_a_section_in_docs_commands():
    text = _doc("commands.md")
    commands = sorted(
        path.stem
        for app in ("ledger", "review")
        for path in (ROOT / app / "management" / "commands").glob("*.py")
        if path.stem != "__init__"
    )
    assert "backup_ledger" in commands
    missing = [name for name in commands if f"### `{name}`" not in text]
    assert not missing, f"commands without a section in docs/commands.md: {missing}"


def test_every_api_route_is_documented_with_its_method_in_docs_api():
    """Each operation of the published API (the OpenAPI document lists every route but the catch-all
    that answers unknown paths with a JSON 404) has its `METHOD /api/…` line in docs/api.md."""
    text = _doc("api.md")
    operations = [
        f"{method.upper()} {path}"
        for path, methods in api.get_openapi_schema()["paths"].items()
        for method in methods
    ]
    assert "GET /api/projects/{project}/context" in operations
    missing = [operation for operation in operations if f"`{operation}`" not in text]
    assert not missing, f"API operations missing from docs/api.md: {missing}"


def test_every_mcp_tool_has_a_row_in_docs_mcp():
    """Every tool is in the docs' tables, with a one-line description and a schema that describes each
    parameter."""
    tools = run_async(build_server(lambda ctx: None).list_tools)
    table = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    assert len(tools) == 23
    assert sorted(t.name for t in tools if f"| `{t.name}` |" not in table) == []
    assert all(t.description and "\n" not in t.description for t in tools), "one line each"
    undescribed = [
        f"{t.name}.{name}"
        for t in tools
        for name, schema in t.input_schema["properties"].items()
        if not schema.get("description")
    ]
    assert undescribed == []


def test_docs_link_only_to_pages_that_exist():
    for page in sorted(DOCS.glob("*.md")):
        links = re.findall(r"\]\(([^)#]+\.md)(?:#[^)]*)?\)", page.read_text(encoding="utf-8"))
        broken = [link for link in links if not (page.parent / link).is_file()]
        assert not broken, f"{page.name} links to missing pages: {broken}"


def test_the_readme_lists_the_docs_pages():
    section = README.split("## Documentation", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"\]\(docs/([a-z_-]+\.md)\)", section))
    assert {"ledger.md", "api.md", "compiler.md", "commands.md", "dashboard.md", "mirror.md"} <= listed
