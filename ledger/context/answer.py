"""What a compile answers (docs/compiler.md, "The answer"): the block, and what each layer holds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Layer:
    """What one layer holds: its tokens, the ids of its rows in block order, and its budget (None: the
    layer is never cut). The relevant layer's `ids` are its memories; it also lists its episodes and its
    decisions, and `order` gives all its rows in block order as (kind, id) pairs, kind one of
    `RELEVANT_KINDS` (not part of the answer: each list is in block order already). The session layer
    says how many of the summary's lines it left out."""

    tokens: int = 0
    ids: list[int] = field(default_factory=list)
    budget: int | None = None
    episodes: list[int] | None = None
    decisions: list[int] | None = None
    cut: int | None = None
    order: list[tuple[str, int]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"tokens": self.tokens, "ids": list(self.ids), "budget": self.budget}
        if self.episodes is not None:
            body["episodes"] = list(self.episodes)
        if self.decisions is not None:
            body["decisions"] = list(self.decisions)
        if self.cut is not None:
            body["cut"] = self.cut
        return body


@dataclass
class CompiledContext:
    text: str | None
    tokens: int = 0
    sha256: str | None = None
    boundaries: Layer = field(default_factory=Layer)
    memory: Layer = field(default_factory=Layer)
    relevant: Layer = field(default_factory=lambda: Layer(episodes=[], decisions=[]))
    session: Layer = field(default_factory=lambda: Layer(cut=0))
    skipped: list[int] = field(default_factory=list)
    error: str | None = None
    compilation_id: int | None = None

    def layers(self) -> dict[str, dict[str, Any]]:
        return {
            "boundaries": self.boundaries.as_dict(),
            "memory": self.memory.as_dict(),
            "relevant": self.relevant.as_dict(),
            "session": self.session.as_dict(),
        }

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "text": self.text,
            "tokens": self.tokens,
            "sha256": self.sha256,
            "layers": self.layers(),
            "skipped": list(self.skipped),
        }
        if self.error is not None:
            body["error"] = self.error
        return body
