"""SQL text built once from the ORM and run many times: how the compiler's statements are made.

A queryset built with `param(name, field)` where a value will be given when the statement runs
compiles (`query`, or `where` for its WHERE clause alone) to SQL in which that value's placeholder is
`%(name)s`. Every other value the ORM would bind (the rules' constants: a status, a type, a rank) is
written into the text as a literal, as a statement written by hand would have it: PostgreSQL then
plans a prepared statement knowing them, and uses the partial indexes defined with them. Hand-written
SQL around such pieces names its values `%(name)s` too. `Statement.of` turns the whole text into
Django's positional `%s`, keeping the names in order, and `Statement.params` gives one run's values
in that order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Field, QuerySet
from django.db.models.expressions import BaseExpression, RawSQL
from django.db.models.sql import Query


class Param:
    """A value of a statement given when it runs, known by its name."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Param({self.name!r})"


def param(name: str, output_field: Field[Any, Any]) -> RawSQL:
    """An expression that stands for the value `name` in a queryset compiled here."""
    return RawSQL("%s", (Param(name),), output_field=output_field)


# A placeholder of compiled SQL, or a percent sign written for the driver.
_PLACEHOLDER = re.compile(r"%%|%s")
# A named placeholder, or a percent sign written for the driver.
_NAMED = re.compile(r"%%|%\((\w+)\)s")


def _literal(value: object) -> str:
    """A constant of a rule as SQL: a whole number, a truth value or a string (a choice's value)."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, str):
        text = str(value)  # a choice (`MemoryStatus.ACTIVE`) as its value
        return "'" + text.replace("'", "''").replace("%", "%%") + "'"
    raise TypeError(f"{value!r} cannot be written into a statement: give it as a param()")


def _named(sql: str, params: tuple[Any, ...] | list[Any]) -> str:
    """Compiled SQL with each of its values named (a `Param`) or written in (any other)."""
    values = iter(params)

    def one(match: re.Match[str]) -> str:
        if match.group() == "%%":
            return "%%"
        value = next(values)
        return f"%({value.name})s" if isinstance(value, Param) else _literal(value)

    text = _PLACEHOLDER.sub(one, sql)
    if next(values, None) is not None:
        raise ValueError("more values than placeholders in the compiled SQL")
    return text


def query(queryset: QuerySet[Any]) -> str:
    """The SQL of `queryset` for the database in use, its values named or written in."""
    return _named(*queryset.query.get_compiler(connection=connection).as_sql())


def expression(value: BaseExpression) -> str:
    """The SQL of an expression that reads no table's columns (`Coalesce(Subquery(…), 0)`) for the
    database in use, its values named or written in."""
    found = Query(None)
    compiler = found.get_compiler(connection=connection)
    return _named(*compiler.compile(value.resolve_expression(found)))


def where(queryset: QuerySet[Any], alias: str) -> str:
    """The WHERE clause of `queryset` (a filter of one table, with no join) for the database in use,
    its table's columns read from `alias` (`m.status`), its values named or written in."""
    found = queryset.query
    table = queryset.model._meta.db_table
    compiler = found.get_compiler(connection=connection)
    text = _named(*compiler.compile(found.where))
    if any(count and name != table for name, count in found.alias_refcount.items()):
        raise ValueError(f"a WHERE clause that joins other tables cannot stand alone: {text}")
    return text.replace(f"{connection.ops.quote_name(table)}.", f"{alias}.")


@dataclass(frozen=True)
class Statement:
    """SQL with Django's positional placeholders, and the name of the value each one takes."""

    sql: str
    names: tuple[str, ...]

    @classmethod
    def of(cls, text: str) -> Statement:
        """A statement from SQL whose values are named `%(name)s`."""
        names: list[str] = []

        def one(match: re.Match[str]) -> str:
            if match.group() == "%%":
                return "%%"
            names.append(match.group(1))
            return "%s"

        return cls(_NAMED.sub(one, text), tuple(names))

    def params(self, **values: Any) -> list[Any]:
        """One run's values, in the order of the placeholders."""
        return [values[name] for name in self.names]
