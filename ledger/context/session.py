"""The session layer (docs/compiler.md, "Budgets"): the open session's block, cut to its budget."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ledger.blocks import session_block, session_block_cut
from ledger.context.answer import Layer
from ledger.models import Session
from ledger.tokens import count_tokens
from ledger.untrusted import clean, one_line


def session_body(row: tuple[Any, ...], layer: Layer, *, budget: int) -> str:
    """The open session's block within `budget` tokens, cut like every other layer: whole when its
    stored count fits; else the summary's oldest lines are left out, as few as needed, then the last
    active issues; a block whose focus alone does not fit is left out. Each cut is noted in the block
    and in `layer.cut` (summary lines left out). `row` is `ledger.context.layers.session_row`'s."""
    pk, focus_area, active_issues, summary, tokens, focus_by, issues_by, summary_by = row
    if isinstance(active_issues, str):
        active_issues = json.loads(active_issues)
    if isinstance(summary_by, str):
        summary_by = json.loads(summary_by)
    session = Session(
        focus_area=focus_area,
        active_issues=active_issues,
        summary=summary,
        focus_by=focus_by,
        issues_by=issues_by,
        summary_by=summary_by,
    )
    body = session_block(session)
    if not body:
        return ""
    if tokens <= budget:
        layer.ids.append(pk)
        layer.tokens = tokens
        return body
    lines = sum(1 for line in clean(summary).split("\n") if line.strip())
    fitted = _fewest_left_out(lines, lambda n: session_block_cut(session, n), budget)
    layer.cut = fitted[0] if fitted is not None else lines
    if fitted is None:
        issues = sum(1 for issue in active_issues if one_line(issue))
        fitted = _fewest_left_out(
            issues, lambda n: session_block_cut(session, lines, issues_left_out=n), budget
        )
    if fitted is None:
        return ""  # the focus alone is over the budget: the layer is left out
    _, best_body, layer.tokens = fitted
    layer.ids.append(pk)
    return best_body


def _fewest_left_out(most: int, render: Callable[[int], str], budget: int) -> tuple[int, str, int] | None:
    """The fewest of `most` parts to leave out so that `render(n)` fits `budget` tokens, found by
    halving (leaving out more never costs more), with that block and its tokens; None when even
    leaving out all `most` does not fit."""
    if most <= 0:
        return None
    best_body = render(most)
    best_tokens = count_tokens(best_body)
    if best_tokens > budget:
        return None
    low, high = 1, most
    while low < high:
        middle = (low + high) // 2
        candidate = render(middle)
        counted = count_tokens(candidate)
        if counted <= budget:
            high, best_body, best_tokens = middle, candidate, counted
        else:
            low = middle + 1
    return high, best_body, best_tokens
