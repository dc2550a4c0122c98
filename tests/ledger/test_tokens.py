"""Token counting: cl100k_base loaded offline once, with a logged estimate as the fallback."""

from __future__ import annotations

import logging

import pytest

from ledger import tokens


def test_counts_cl100k_base_tokens():
    assert tokens.count_tokens("hello world") == 2
    assert tokens.count_tokens("") == 0
    assert not tokens.using_fallback()


def test_encoding_is_loaded_once(monkeypatch):
    tokens.count_tokens("warm up")
    loaded = tokens._encoder
    tokens.count_tokens("again")
    assert tokens._encoder is loaded


@pytest.fixture
def broken_encoding(monkeypatch):
    monkeypatch.setattr(tokens, "_encoder", None)
    monkeypatch.setattr(tokens, "_fallback", False)
    monkeypatch.setattr(tokens, "ENCODING_NAME", "no_such_encoding_offline")
    yield
    # monkeypatch restores the real encoder and flags


def test_missing_encoding_falls_back_to_an_estimate_and_logs_once(broken_encoding, caplog):
    with caplog.at_level(logging.WARNING, logger="canon.tokens"):
        first = tokens.count_tokens("x" * 10)
        second = tokens.count_tokens("y" * 8)
    assert (first, second) == (3, 2)
    assert tokens.using_fallback()
    assert sum("could not load" in r.getMessage() for r in caplog.records) == 1
