"""Normalisation of the values every entry point accepts (docs/ledger.md).

Pure functions, no database: the API, forms, the importer and the services all call these,
so a slug, a tag or an agent name means the same thing wherever it arrives.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

# The UTS #39 skeleton (NFD, default-ignorables dropped, each character mapped to its prototype in
# Unicode's confusables.txt). The package exports only its domain checker, so the one function is
# imported here and nowhere else; the exact version pin and tests/ledger/test_agent_identity.py
# hold it in place.
from homoglyph._skeleton import skeleton as _tr39_skeleton

SLUG_MAX_LENGTH = 100
# A stored entry slug: the requested slug plus its de-collision suffix (`--agent--2`).
ENTRY_SLUG_MAX_LENGTH = 200
AGENT_NAME_MAX_LENGTH = 64
# NFKC and case folding can lengthen a name (`ﬃ` is `ffi`); a name past these limits once
# normalised is refused rather than cut, so two names never share a truncated identity.
AGENT_KEY_MAX_LENGTH = AGENT_NAME_MAX_LENGTH * 3
AGENT_SKELETON_MAX_LENGTH = AGENT_KEY_MAX_LENGTH * 2
TAG_MAX_LENGTH = 64
# At most this many tags on a row, and in a filter: a bound on every tag query and index.
MAX_TAGS = 32
CROSS_TEAM_TAG = "cross-team"

_NON_SLUG = re.compile(r"[^a-z0-9]+")
# Exactly two dashes: the separator of a de-collided slug (`use-postgres--bob--2`).
_DE_COLLISION = re.compile(r"(?<!-)--(?!-)")
# A surrogate code point left in a Python string is one that had no partner: it cannot be encoded
# as UTF-8, so neither database can store it.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class InvalidValue(ValueError):
    """A value a client sent cannot be used; the message says why, safe to show."""


def check_text(value: str, what: str = "") -> str:
    """Text either database can store: no NUL character, no unpaired UTF-16 surrogate."""
    subject = f"{what} must" if what else "must"
    if "\x00" in value:
        raise InvalidValue(f"{subject} not contain the NUL character (\\u0000)")
    if _LONE_SURROGATE.search(value):
        raise InvalidValue(f"{subject} not contain an unpaired UTF-16 surrogate (\\ud800-\\udfff)")
    return value


def check_json(value: Any) -> Any:
    """A JSON value either database can store: every key and string passes `check_text`, numbers are finite.

    Walks without recursion, so the depth is bounded only by what the JSON parser accepted.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            check_text(item, "a string")
        elif isinstance(item, float) and not math.isfinite(item):
            raise InvalidValue("numbers must be finite (no NaN or Infinity)")
        elif isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    raise InvalidValue("object keys must be strings")
                check_text(key, "an object key")
                stack.append(child)
        elif isinstance(item, list | tuple):
            stack.extend(item)
        elif item is not None and not isinstance(item, bool | int | float):
            raise InvalidValue(f"{type(item).__name__} is not a JSON value")
    return value


def normalize_slug(raw: str) -> str:
    """Lower-case, collapse every run outside [a-z0-9] to one '-', trim '-', cap at 100 characters."""
    slug = _NON_SLUG.sub("-", raw.lower()).strip("-")
    return slug[:SLUG_MAX_LENGTH].strip("-")


def normalize_entry_slug(raw: str) -> str:
    """A slug as an inbox file or its front matter names it: normalised like any slug, but Canon's
    de-collision separator kept (`use-postgres--bob` stays itself, not `use-postgres-bob`)."""
    pieces = (normalize_slug(piece) for piece in _DE_COLLISION.split(raw))
    return "--".join(piece for piece in pieces if piece)[:ENTRY_SLUG_MAX_LENGTH].strip("-")


def require_slug(raw: str) -> str:
    slug = normalize_slug(raw)
    if not slug:
        raise InvalidValue(f"slug {raw!r} has no letters or digits; use something like 'use-postgres'")
    return slug


def agent_segment(agent_name: str) -> str:
    """The agent's name as used in de-collided slugs and file names (`Agent Beta` -> `agent-beta`)."""
    return normalize_slug(agent_name) or "agent"


def clean_agent_name(raw: str) -> str:
    """Trim surrounding white space and check 1-64 printable characters. Returns the display form."""
    name = raw.strip()
    if not name:
        raise InvalidValue("agent name must not be empty")
    if len(name) > AGENT_NAME_MAX_LENGTH:
        raise InvalidValue(f"agent name must be at most {AGENT_NAME_MAX_LENGTH} characters, got {len(name)}")
    if not name.isprintable():
        raise InvalidValue("agent name must contain printable characters only")
    return name


def agent_key(name: str) -> str:
    """Agent identity: compatibility-normalised (NFKC), then case-folded, everywhere.

    `Coordinator` == `COORDINATOR`; `Alice` in fullwidth letters is `alice`; `lead` written with
    U+2113 SCRIPT SMALL L is `lead`.
    """
    key = unicodedata.normalize("NFKC", clean_agent_name(name)).casefold()
    if len(key) > AGENT_KEY_MAX_LENGTH:
        raise InvalidValue("agent name is too long once normalised; use a shorter name")
    return key


def agent_skeleton(key: str) -> str:
    """What an agent key looks like: its UTS #39 confusable skeleton (`alice` with a Cyrillic `a` is `alice`).

    Two different keys with one skeleton are names a reader cannot tell apart.
    """
    skeleton = _tr39_skeleton(key)
    if len(skeleton) > AGENT_SKELETON_MAX_LENGTH:
        raise InvalidValue("agent name is too long once normalised; use a shorter name")
    return skeleton


def text_skeleton(text: str) -> str:
    """`text` as it looks: the same UTS #39 skeleton as `agent_skeleton`, for text of any length.

    The skeleton maps each character on its own, so each different character is mapped once and the
    text translated in one pass: linear, and fast on a megabyte.
    """
    decomposed = unicodedata.normalize("NFD", text)
    table = {ord(ch): mapped for ch in set(decomposed) if (mapped := _tr39_skeleton(ch)) != ch}
    return unicodedata.normalize("NFD", decomposed.translate(table)) if table else decomposed


def content_key(text: str) -> str:
    """What makes two memories the same memory: the sha256 of the content with compatibility forms
    folded (NFKC), case folded, invisible format characters dropped, runs of spacing made one space,
    and spacing and full stops at either end dropped. "Use  UTC." and "use UTC" share a key."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    visible = "".join(ch for ch in folded if unicodedata.category(ch) != "Cf")
    normal = " ".join(visible.split()).strip(" .")
    return hashlib.sha256(normal.encode("utf-8")).hexdigest()


def normalize_tags(raw: str | Iterable[str] | None) -> list[str]:
    """Tags from a comma-separated string or a list: trimmed, lower-cased, empties and repeats dropped.

    At most `MAX_TAGS` different tags. Linear in the input: repeats are found in a dict, and the walk
    stops at the first tag past the limit, however many follow.
    """
    if raw is None:
        return []
    items: Iterable[object] = raw.split(",") if isinstance(raw, str) else raw
    tags: dict[str, None] = {}  # insertion-ordered, with constant-time membership
    for item in items:
        if not isinstance(item, str):
            raise InvalidValue("each tag must be a string")
        check_text(item, "a tag")
        tag = item.strip().lower()
        if not tag or tag in tags:
            continue
        if "," in tag:
            raise InvalidValue(f"tag {tag!r} must not contain a comma")
        if len(tag) > TAG_MAX_LENGTH:
            raise InvalidValue(f"tag {tag[:20]!r}… is longer than {TAG_MAX_LENGTH} characters")
        if len(tags) == MAX_TAGS:
            raise InvalidValue(f"at most {MAX_TAGS} tags, got more")
        tags[tag] = None
    return list(tags)


def tag_index(tags: list[str]) -> str:
    """Tags as ',a,b,' so a whole-tag match is a plain substring test on any database."""
    return "," + ",".join(tags) + "," if tags else ""


def tag_needle(tag: str) -> str:
    return f",{tag},"
