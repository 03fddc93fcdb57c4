"""The Core side of the ORM models: the table a model maps, and the rows a write matched."""

from __future__ import annotations

from typing import Any

from sqlalchemy import CursorResult, Result, Table

from models import Base


def table(model: type[Base]) -> Table:
    """The table `model` maps (declarative types `__table__` as any FROM clause, not a Table)."""
    mapped = model.__table__
    if not isinstance(mapped, Table):
        raise TypeError(f"{model.__name__} does not map one table")
    return mapped


def rowcount(result: Result[*tuple[Any, ...]]) -> int:
    """The rows a write matched (Session.execute is typed as a Result; a write returns a count)."""
    if not isinstance(result, CursorResult):
        raise TypeError("not the result of a write")
    return result.rowcount
