"""The shape of the code: data flows one way, from the request down to the models, and never back.

Read from the source files (not by importing them), so a cycle hidden behind a function-level import
is found as well as one at the top of a module.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("ledger", "review", "config")

# Lower layers never import higher ones. A module takes the layer of the longest prefix listed.
LAYERS: list[tuple[str, ...]] = [
    (
        "ledger.values",
        "ledger.tokens",
        "ledger.untrusted",
        "ledger.signals",
        "ledger.word_stats",
        "ledger.models",
    ),
    (
        "ledger.blocks",
        "ledger.lifecycle",
        "ledger.selectors",
        "ledger.search",
        "ledger.search_words",
        "ledger.search_sql",
        "ledger.search_text",
        "ledger.relevance",
        "ledger.filters",
        "ledger.visibility",
        "ledger.competition",
    ),
    ("ledger.services",),
    ("ledger.context", "ledger.finder", "ledger.mirror", "ledger.scribe"),
    ("ledger.tasks",),
    ("ledger.actions",),
    ("ledger.api", "ledger.admin"),
    ("ledger.mcp",),
    ("ledger.management",),
    ("ledger.apps", "ledger.urls", "ledger"),
    ("review",),
    ("config",),
]
LAYERS_NOT_CHECKED = ("ledger.migrations", "review.migrations")

# Imports inside functions, each with its reason. Django's `AppConfig.ready` is always allowed.
LAZY_IMPORTS_ALLOWED = {
    ("ledger.tokens", "tiktoken"): "loading the tokenizer costs a second; only the first count pays it",
}


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    in_function: str | None  # the enclosing function's name


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            modules[module_name(path)] = path
    return modules


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The project module `name` is, or is inside (an attribute of a module)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[Import] = []

    def visit(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(child, child.name)
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    found.append(Import(name, alias.name, child.lineno, function))
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.rsplit(".", child.level - 1)[0] if child.level > 1 else package
                    base = f"{anchor}.{base}" if base else anchor
                for alias in child.names:
                    # `from ledger import services` imports the module ledger.services.
                    target = f"{base}.{alias.name}"
                    found.append(Import(name, target if target in modules else base, child.lineno, function))
            else:
                visit(child, function)

    visit(tree, None)
    return found


def project_imports() -> list[Import]:
    modules = project_modules()
    result = []
    for name, path in sorted(modules.items()):
        for item in imports_of(name, path, modules):
            target = _resolve(item.target, modules)
            result.append(
                item if target is None else Import(item.source, target, item.line, item.in_function)
            )
    return result


def layer_of(module: str) -> int | None:
    best: tuple[int, int] | None = None
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            matches = module == prefix or module.startswith(prefix + ".")
            if matches and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return None if best is None else best[0]


def _is_project(module: str) -> bool:
    return module.split(".")[0] in PACKAGES


def test_every_project_module_has_a_layer():
    missing = [
        name
        for name in project_modules()
        if layer_of(name) is None and not name.startswith(LAYERS_NOT_CHECKED)
    ]
    assert missing == []


def test_no_module_imports_a_higher_layer():
    upward = []
    for item in project_imports():
        if not _is_project(item.target) or item.source.startswith(LAYERS_NOT_CHECKED):
            continue
        if item.in_function == "ready" and item.source.endswith(".apps"):
            continue
        source, target = layer_of(item.source), layer_of(item.target)
        assert source is not None and target is not None
        if target > source:
            upward.append(f"{item.source}:{item.line} imports {item.target}")
    assert upward == []


def test_the_ledger_never_imports_the_dashboard_or_the_api():
    """The API is one way in among three: the MCP tools, the command serving them and the dashboard
    share what the API's routes use through `ledger.actions`, never through a route module."""

    def forbidden(source: str, target: str) -> bool:
        if source.startswith("ledger.api"):
            return False
        if source.startswith("ledger"):
            return target.startswith(("review", "ledger.api"))
        return source.startswith("review") and target.startswith("ledger.api")

    wrong = [
        f"{item.source}:{item.line} imports {item.target}"
        for item in project_imports()
        if forbidden(item.source, item.target)
    ]
    assert wrong == []


# The ways in: each calls the ledger's operations through `ledger.actions`, which checks who is asking
# and names the transport in the audit, never the functions underneath.
TRANSPORTS = ("ledger.api", "ledger.mcp", "review")
OPERATIONS = {
    "ledger.services": {
        "entry_submit",
        "entry_merge",
        "entry_merge_outcome",
        "entry_reject",
        "entry_resolve",
        "entry_undo",
        "entry_edit",
        "memory_propose",
        "decision_create",
        "decision_update",
        "decision_edit",
        "decision_archive",
        "decision_supersede",
        "decisions_retype",
        "memory_record",
        "memory_store",
        "memory_edit",
        "memory_archive",
        "memory_merge",
        "memory_dismiss_similar",
        "episode_record",
        "session_start",
        "session_update_current",
    },
    "ledger.context": {"compile"},
    "ledger.scribe": {"scribe_run"},
    "ledger.mirror": {"run_and_record"},
}


def operations_called(name: str, path: Path) -> list[str]:
    """The operations of `OPERATIONS` module `name` reaches: `services.entry_merge(...)` after
    `from ledger import services`, or a name imported from a module (or a module inside it)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    aliases: dict[str, str] = {}  # local name -> the module of OPERATIONS it stands for
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                whole = f"{node.module}.{alias.name}"
                if whole in OPERATIONS:
                    aliases[alias.asname or alias.name] = whole
                owner = next(
                    (m for m in OPERATIONS if node.module == m or node.module.startswith(m + ".")), None
                )
                if owner is not None and alias.name in OPERATIONS[owner]:
                    found.append(f"{name}:{node.lineno} imports {owner}.{alias.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            owner = aliases.get(node.value.id)
            if owner is not None and node.attr in OPERATIONS[owner]:
                found.append(f"{name}:{node.lineno} calls {owner}.{node.attr}")
    return found


def test_the_ways_in_act_through_the_action_layer():
    direct = [
        line
        for name, path in sorted(project_modules().items())
        if name.startswith(TRANSPORTS)
        for line in operations_called(name, path)
    ]
    assert direct == []


def test_the_operation_finder_sees_both_spellings(tmp_path):
    source = tmp_path / "view.py"
    source.write_text(
        "from ledger import services\nfrom ledger.services.inbox.merge import entry_merge\n\n"
        "def f():\n    services.entry_reject()\n    services.invalid()\n"
    )
    assert operations_called("review.views.x", source) == [
        "review.views.x:2 imports ledger.services.entry_merge",
        "review.views.x:5 calls ledger.services.entry_reject",
    ]


def test_no_imports_inside_functions_without_a_reason():
    lazy = [
        f"{item.source}:{item.line} imports {item.target} inside {item.in_function}()"
        for item in project_imports()
        if item.in_function is not None
        and not (item.in_function == "ready" and item.source.endswith(".apps"))
        and (item.source, item.target.split(".")[0]) not in LAZY_IMPORTS_ALLOWED
    ]
    assert lazy == []


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm: the groups of modules that import each other, directly or not."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return groups


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for item in project_imports():
        if not _is_project(item.target) or item.target == item.source:
            continue
        # A package's own modules import their siblings by full name; the package's __init__ that
        # re-exports them is entered first by Python and is not an edge back.
        if item.source.startswith(item.target + "."):
            continue
        graph.setdefault(item.source, set()).add(item.target)
    return graph


def test_there_is_no_import_cycle():
    cycles = [group for group in strongly_connected(import_graph()) if len(group) > 1]
    assert cycles == []


# One concept per module: a module this long holds several, and is split by concept.
MAX_MODULE_LINES = 600
LONG_MODULES_ALLOWED = {
    "ledger.models": "one concept: the ledger's tables, each with its constraints and indexes",
}


def test_no_module_is_longer_than_600_lines():
    long = [
        f"{name}: {lines} lines"
        for name, path in sorted(project_modules().items())
        if "migrations" not in name.split(".")
        and name not in LONG_MODULES_ALLOWED
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    ]
    assert not long, f"over {MAX_MODULE_LINES} lines: {'; '.join(long)}"


@pytest.mark.parametrize(
    "graph, expected",
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ],
)
def test_the_cycle_finder_finds_cycles(graph, expected):
    assert [group for group in strongly_connected(graph) if len(group) > 1] == expected


def test_the_walk_sees_imports_inside_functions_and_relative_ones(tmp_path):
    modules = {"ledger.services": Path(), "ledger.services.inbox": Path(), "ledger.mirror": Path()}
    source = tmp_path / "inbox.py"
    source.write_text("from . import fields\n\ndef f():\n    from ledger import mirror\n")
    found = imports_of("ledger.services.inbox", source, modules)
    assert [(i.target, i.in_function) for i in found] == [
        ("ledger.services", None),
        ("ledger.mirror", "f"),
    ]
    assert layer_of("ledger.services.inbox") < layer_of("ledger.mirror")
