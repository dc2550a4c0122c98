"""YAML front matter (inbox files that have it, `identity/now.md`), read safely and written plainly."""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.nodes import Node

from ledger.mirror.squad.lines import _BOM

_YAML_MAX_BYTES = 64 * 1024
_YAML_MAX_DEPTH = 64


class FrontMatterError(ValueError):
    """Front matter Canon refuses to read. The message is safe to show to the team."""


_FRONT_MATTER_OPEN = re.compile(r"---[ \t]*\r?(?:\n|\Z)")
_FRONT_MATTER_CLOSE = re.compile(r"^---[ \t]*\r?$(?:\n)?", re.MULTILINE)
_CORE_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "seq", "map")
)
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_YAML_LINE_BREAKS = frozenset("\x85\u2028\u2029")


def split_front_matter(text: str) -> tuple[str, str] | None:
    """(front matter, rest) when `text`, after an optional byte-order mark, starts with a `---` line that
    a later `---` line closes; None otherwise. The front matter holds the mark, both `---` lines and their
    line endings, so the two parts joined give `text` back."""
    start = 1 if text.startswith(_BOM) else 0
    opened = _FRONT_MATTER_OPEN.match(text, start)
    if opened is None or not opened.group().endswith("\n"):
        return None
    closed = _FRONT_MATTER_CLOSE.search(text, opened.end())
    if closed is None:
        return None
    return text[: closed.end()], text[closed.end() :]


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses anchors, aliases, tags beyond the core types and deep nesting, and keeps
    timestamps as the text written."""

    yaml_implicit_resolvers = {
        first: [(tag, pattern) for tag, pattern in resolvers if tag != _TIMESTAMP_TAG]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:
        # refused while scanning: the scanner looks far ahead inside deeply nested `[` and `{`
        if self.flow_level >= _YAML_MAX_DEPTH:
            raise FrontMatterError(f"YAML is nested more than {_YAML_MAX_DEPTH} levels deep")
        super().fetch_flow_collection_start(TokenClass)

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        if self.check_event(yaml.AliasEvent):
            raise FrontMatterError("YAML aliases are not accepted")
        event = self.peek_event()
        if getattr(event, "anchor", None) is not None:
            raise FrontMatterError("YAML aliases are not accepted")
        tag = getattr(event, "tag", None)
        if tag is not None and tag != "!" and tag not in _CORE_TAGS:
            raise FrontMatterError("YAML tags are not accepted")
        self._depth += 1
        if self._depth > _YAML_MAX_DEPTH:
            raise FrontMatterError(f"YAML is nested more than {_YAML_MAX_DEPTH} levels deep")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _PlainDumper(yaml.SafeDumper):
    """SafeDumper that repeats shared values instead of writing anchors and aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def represent_str(self, data: str) -> yaml.ScalarNode:
        if _YAML_LINE_BREAKS.intersection(data):
            # only the double-quoted style keeps these line breaks as they are
            return self.represent_scalar("tag:yaml.org,2002:str", data, style='"')
        return super().represent_str(data)


_PlainDumper.add_representer(str, _PlainDumper.represent_str)


def load_yaml(source: str) -> dict[str, Any]:
    """Read YAML front matter safely into plain data (text, numbers, booleans, null, lists, mappings).

    `source` is the YAML itself, or a whole block as `split_front_matter` returns it. Refuses, with a
    FrontMatterError, anything over 64 KiB, anchors and aliases ("YAML aliases are not accepted"), tags
    beyond the core types, nesting deeper than 64 levels, invalid YAML, and anything that is not a mapping
    with text keys. Dates and timestamps stay the text written (`parse_date` reads them). Empty YAML is {}.
    """
    if len(source) > _YAML_MAX_BYTES or len(source.encode("utf-8", "surrogatepass")) > _YAML_MAX_BYTES:
        raise FrontMatterError("front matter is larger than 64 KiB")
    block = split_front_matter(source)
    if block is not None and not block[1].strip():
        whole = block[0]
        source = whole[whole.index("\n") + 1 : whole.rstrip("\r\n").rfind("\n") + 1]
    try:
        loader = _StrictLoader(source)
        try:
            data = loader.get_single_data()
        finally:
            loader.dispose()
    except FrontMatterError:
        raise
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise FrontMatterError(
            f"front matter is not valid YAML{where}: {error.problem or 'unreadable'}"
        ) from None
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError):
        raise FrontMatterError("front matter is not valid YAML") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontMatterError("front matter must be a mapping of names to values")
    if not all(isinstance(key, str) for key in data):
        raise FrontMatterError("front matter names must be text")
    return data


def render_now(*, meta: dict[str, Any], body: str) -> str:
    """identity/now.md: "---\\n" + `meta` as YAML (keys in their order, Unicode kept) + "---\\n" + body."""
    dumped = yaml.dump(
        meta,
        Dumper=_PlainDumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=10_000,
    )
    return f"---\n{dumped}---\n{body}"
