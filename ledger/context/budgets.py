"""What each layer of the context block may spend (docs/compiler.md, "Budgets").

Each layer but the boundaries has a token budget (`Budgets`): from the request, else the project's
`context_budgets`, else the settings. A project's value that is not valid is ignored and logged
(`budget_problems` says why; the admin refuses it).
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass

from django.conf import settings

from ledger.models import Project

logger = logging.getLogger("canon.context")

MAX_ITEMS_LIMIT = 200
MAX_TOKENS_LIMIT = 100_000
TASK_MAX_LENGTH = 2_000
# The budgets a project may set in `context_budgets`, and the largest value of each.
BUDGET_LIMITS = {
    "max_items": MAX_ITEMS_LIMIT,
    "memory": MAX_TOKENS_LIMIT,
    "relevant": MAX_TOKENS_LIMIT,
    "session": MAX_TOKENS_LIMIT,
}


@dataclass(frozen=True)
class Budgets:
    """What each layer may spend: `max_items` memories and `memory` tokens in the memory layer,
    `relevant` tokens in the relevant layer, `session` tokens in the session layer."""

    max_items: int
    memory: int
    relevant: int
    session: int

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def budget_problems(value: object) -> list[str]:
    """What is wrong with a project's `context_budgets`, one message per key (none: it is valid).

    It is an object whose keys are any of `BUDGET_LIMITS`, each a whole number from 0 to its limit.
    """
    if not isinstance(value, dict):
        return ['must be an object such as {"relevant": 1500}']
    problems = []
    for key, number in value.items():
        if key not in BUDGET_LIMITS:
            problems.append(f"{key!r} is not a budget; use {', '.join(BUDGET_LIMITS)}")
        elif isinstance(number, bool) or not isinstance(number, int):
            problems.append(f"{key} must be a whole number, not {number!r}")
        elif not 0 <= number <= BUDGET_LIMITS[key]:
            problems.append(f"{key} must be between 0 and {BUDGET_LIMITS[key]}")
    return problems


def budgets_for(
    project: Project,
    *,
    max_items: int | None = None,
    max_tokens: int | None = None,
    relevant_tokens: int | None = None,
    session_tokens: int | None = None,
) -> Budgets:
    """The budgets of one compile: each from the request when given, else from the project's
    `context_budgets`, else from the settings. A project's value that is not valid is left out (and
    logged): the compile goes on with the setting."""
    own = project.context_budgets if isinstance(project.context_budgets, dict) else {}
    problems = budget_problems(project.context_budgets)
    if problems:
        logger.warning(
            "project %s: context_budgets ignored where invalid: %s", project.slug, "; ".join(problems)
        )
    valid = {key: own[key] for key in BUDGET_LIMITS if key in own and not budget_problems({key: own[key]})}

    def pick(requested: int | None, key: str, default: int) -> int:
        return requested if requested is not None else valid.get(key, default)

    return Budgets(
        max_items=pick(max_items, "max_items", settings.CANON_CONTEXT_MAX_ITEMS),
        memory=pick(max_tokens, "memory", settings.CANON_CONTEXT_MAX_TOKENS),
        relevant=pick(relevant_tokens, "relevant", settings.CANON_CONTEXT_RELEVANT_TOKENS),
        session=pick(session_tokens, "session", settings.CANON_CONTEXT_SESSION_TOKENS),
    )
