from __future__ import annotations

import pytest

from ledger.values import (
    InvalidValue,
    agent_key,
    agent_segment,
    check_json,
    check_text,
    clean_agent_name,
    normalize_slug,
    normalize_tags,
    require_slug,
    tag_index,
)


@pytest.mark.parametrize(
    ("raw", "slug"),
    [
        ("Use Postgres", "use-postgres"),
        ("  --Cache: Redis!!  ", "cache-redis"),
        ("a__b  c", "a-b-c"),
        ("ÜBER café", "ber-caf"),
        ("already-fine-123", "already-fine-123"),
    ],
)
def test_slug_normalisation(raw, slug):
    assert normalize_slug(raw) == slug


def test_slug_is_capped_at_100_characters_without_trailing_dash():
    slug = normalize_slug("a" * 99 + " b" + "c" * 50)
    assert len(slug) <= 100
    assert not slug.endswith("-")
    assert slug == "a" * 99


@pytest.mark.parametrize("raw", ["", "---", "!!!", "日本語"])
def test_slug_that_normalises_to_nothing_is_refused(raw):
    with pytest.raises(InvalidValue):
        require_slug(raw)


def test_agent_segment_normalises_like_a_slug_and_never_is_empty():
    assert agent_segment("Agent Beta") == "agent-beta"
    assert agent_segment("エージェント") == "agent"


def test_agent_identity_is_case_insensitive():
    assert agent_key("Coordinator") == agent_key("coordinator") == agent_key("COORDINATOR")


def test_agent_name_keeps_its_spelling_and_is_trimmed():
    assert clean_agent_name("  Agent Beta ") == "Agent Beta"


@pytest.mark.parametrize("raw", ["", "   ", "x" * 65, "bad\nname", "tab\tname", "nul\x00"])
def test_invalid_agent_names_are_refused(raw):
    with pytest.raises(InvalidValue):
        clean_agent_name(raw)


def test_agent_name_of_64_characters_is_accepted():
    assert clean_agent_name("x" * 64) == "x" * 64


def test_tags_from_a_comma_separated_string():
    assert normalize_tags(" Team, cross-team ,, TEAM,ops ") == ["team", "cross-team", "ops"]


def test_tags_from_a_list_keep_order_and_drop_repeats():
    assert normalize_tags(["B", "a", "b", " "]) == ["b", "a"]


def test_tags_that_are_not_strings_are_refused():
    with pytest.raises(InvalidValue):
        normalize_tags(["ok", 3])  # type: ignore[list-item]


def test_tag_index_matches_whole_tags_only():
    index = tag_index(["cross-team", "ops"])
    assert ",cross-team," in index
    assert ",team," not in index


@pytest.mark.parametrize("text", ["a\x00b", "\ud800", "x\udfffy", "\udc00\ud800"])
def test_text_a_database_cannot_store_is_refused(text):
    with pytest.raises(InvalidValue):
        check_text(text)


@pytest.mark.parametrize("text", ["", "plain", "\U0001f600 emoji", "tab\tand\nnewline", "\u202e"])
def test_ordinary_text_passes(text):
    assert check_text(text) == text


@pytest.mark.parametrize(
    "value",
    [
        {"k": "\x00"},
        {"\ud800": 1},
        [1, [2, ["\udfff"]]],
        float("inf"),
        [float("nan")],
        {"a": {"b": object()}},
    ],
)
def test_json_a_database_cannot_store_is_refused(value):
    with pytest.raises(InvalidValue):
        check_json(value)


def test_ordinary_json_passes_at_any_depth():
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    value = {"a": [1, 2.5, True, None, "s", {"b": 10**40}], "deep": deep}
    assert check_json(value) is value


def test_a_tag_with_a_nul_character_is_refused():
    with pytest.raises(InvalidValue):
        normalize_tags(["ok", "b\x00d"])
