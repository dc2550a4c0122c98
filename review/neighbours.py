"""Previous and next through a filtered list, from one row's page (docs/dashboard.md "Entry and
decision pages").

A row's page takes the list's own query string and finds its neighbours in the list's order by keyset:
the rows just before and just after this one's sort key, never the rows before it read into Python. The
order is whatever the list's queryset sorts by (the inbox's computed priority, then age; a text search's
relevance), so the page and the list always agree. It costs one query, and one more when the sort key
is computed by the query rather than held by the row (a search's relevance): the same at any depth.

A first sort key computed from the row's columns (the inbox's priority: boundary proposals, other
pending ones, decided ones) is given as `groups`: its name, and one condition on plain columns per
value, in order (a search sorts by relevance first: its list is not grouped). Each neighbour is then
looked for group by group, where the list's index finds it at once, instead of computing the key for
every row and sorting them all.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from functools import reduce
from typing import Any

from django.db.models import (
    Exists,
    F,
    FloatField,
    Func,
    IntegerField,
    Model,
    OrderBy,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.functions import Cast, Coalesce


@dataclass(frozen=True)
class Neighbours:
    """Where a row stands in a list: its neighbours' ids, its 1-based position, the list's length.

    A row the list does not hold (decided since, or filtered out) has no position; its page offers the
    list's first row instead.
    """

    previous: int | None
    next: int | None
    position: int | None
    total: int
    first: int | None = None


Order = list[tuple[str, bool]]
# The conditions of a grouped first sort key, one per value in order; None for a value the list cannot hold.
Groups = Sequence[Q | None]


def _order(rows: QuerySet[Any]) -> Order:
    """The list's sort keys as (name, descending), from the queryset's own `order_by`."""
    order = [str(name) for name in rows.query.order_by] or ["pk"]
    return [(name.lstrip("-"), name.startswith("-")) for name in order]


def _sorted(order: Order, *, backwards: bool = False) -> list[OrderBy]:
    return [F(name).asc() if descending == backwards else F(name).desc() for name, descending in order]


def _beyond(order: Order, keys: list[Any], *, after: bool) -> Q:
    """The rows sorted after (or before) the one whose sort key is `keys`: a keyset condition.

    Written nested, `a >= x AND (a > x OR (b >= y AND (b > y OR …)))`, rather than as a disjunction, so
    that the database seeks to the row along the list's index instead of scanning up to it.
    """
    (name, descending), *rest = order
    strict = "lt" if descending == after else "gt"
    if not rest:
        return Q(**{f"{name}__{strict}": keys[0]})
    return Q(**{f"{name}__{strict}e": keys[0]}) & (
        Q(**{f"{name}__{strict}": keys[0]}) | _beyond(rest, keys[1:], after=after)
    )


def _count(rows: QuerySet[Any]) -> Subquery:
    """How many rows `rows` holds, as a scalar subquery."""
    counted = rows.order_by().annotate(n=Func(Value(1), function="COUNT", output_field=IntegerField()))
    return Subquery(counted.values("n")[:1], output_field=IntegerField())


def _one(rows: QuerySet[Any], order: Order, *, backwards: bool = False) -> Subquery:
    """The id of the first row of `rows` in `order` (the last, `backwards`), as a scalar subquery."""
    return Subquery(rows.order_by(*_sorted(order, backwards=backwards)).values("pk")[:1])


def _first_of(candidates: list[Subquery]) -> Any:
    return candidates[0] if len(candidates) == 1 else Coalesce(*candidates)


def _read(rows: QuerySet[Any], name: str) -> Any:
    """A sort key as the keyset compares it. PostgreSQL's search ranks are `real`, compared as `double
    precision` with the value read: read as `real`, its shortest text would not be the same number."""
    annotation = rows.query.annotations.get(name)
    if annotation is not None and isinstance(annotation.output_field, FloatField):
        return Cast(F(name), FloatField())
    return F(name)


def _keys(rows: QuerySet[Any], row: Model, order: Order) -> list[Any] | None:
    """The row's sort key: from the row itself when it holds every part (a column, or an annotation
    it was read with), else read through the list (None when the list does not hold the row)."""
    missing = object()
    held = [getattr(row, name, missing) for name, _ in order]
    if missing not in held:
        return held
    names = {f"key_{depth}": _read(rows, name) for depth, (name, _) in enumerate(order)}
    found = rows.filter(pk=row.pk).annotate(**names).values(*names).first()
    return None if found is None else [found[name] for name in names]


def _around(rows: QuerySet[Any], order: Order, keys: list[Any]) -> dict[str, Any]:
    """The columns that place a row by its whole sort key."""
    before, after = _beyond(order, keys, after=False), _beyond(order, keys, after=True)
    return {
        "previous": _one(rows.filter(before), order, backwards=True),
        "next": _one(rows.filter(after), order),
        "before": _count(rows.filter(before)),
    }


def _first_grouped(rows: QuerySet[Any], order: Order, groups: Groups) -> Any:
    return _first_of([_one(rows.filter(condition), order) for condition in groups if condition is not None])


def _around_grouped(rows: QuerySet[Any], order: Order, keys: list[Any], groups: Groups) -> dict[str, Any]:
    """The columns that place a row whose first sort key is the number of its group in `groups`: the
    neighbours within its group, else the nearest of the groups around it. A group the list cannot
    hold (None) is not searched."""
    group, rest, rest_keys = keys[0], order[1:], keys[1:]
    inside = rows.filter(groups[group])
    later = [_one(rows.filter(condition), rest) for condition in groups[group + 1 :] if condition is not None]
    earlier = [
        _one(rows.filter(condition), rest, backwards=True)
        for condition in reversed(groups[:group])
        if condition is not None
    ]
    columns = {
        "previous": _first_of(
            [_one(inside.filter(_beyond(rest, rest_keys, after=False)), rest, backwards=True), *earlier]
        ),
        "next": _first_of([_one(inside.filter(_beyond(rest, rest_keys, after=True)), rest), *later]),
        "before": _count(inside.filter(_beyond(rest, rest_keys, after=False))),
    }
    before = [condition for condition in groups[:group] if condition is not None]
    if before:
        columns["before_groups"] = _count(rows.filter(reduce(operator.or_, before)))
    return columns


def neighbours(rows: QuerySet[Any], row: Model, *, groups: tuple[str, Groups] | None = None) -> Neighbours:
    """`row`'s place in `rows` (filtered and ordered as the list shows them), in one statement: a
    query of the row itself whose columns are the list's subqueries. `groups`: see the module's note."""
    order = _order(rows)
    keys = _keys(rows, row, order)
    here = type(row)._default_manager.filter(pk=row.pk)
    grouped = groups[1] if groups and order[0] == (groups[0], False) else None
    columns: dict[str, Any] = {"total": _count(rows)}
    if keys is None or (grouped and grouped[keys[0]] is None):
        columns["first"] = _first_grouped(rows, order[1:], grouped) if grouped else _one(rows, order)
    else:
        columns["in_list"] = Exists(rows.filter(pk=OuterRef("pk")))
        columns |= _around_grouped(rows, order, keys, grouped) if grouped else _around(rows, order, keys)
        if grouped:
            columns["first"] = _first_grouped(rows, order[1:], grouped)
        elif len(keys) == len(order) and all(hasattr(row, name) for name, _ in order):
            # The key came with the row, which the list may not hold: its first row stands in.
            columns["first"] = _one(rows, order)
    found = here.values(**columns).first() or {}
    if not found.get("in_list"):
        return Neighbours(None, None, None, found.get("total") or 0, found.get("first"))
    position = found["before"] + found.get("before_groups", 0) + 1
    return Neighbours(found["previous"], found["next"], position, found["total"])
