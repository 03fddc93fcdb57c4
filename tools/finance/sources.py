"""Source ids of the finance tools' search results: parsed, and resolved to their owner's rows.

The ids are built in tools/finance/cites.py; here they are read back: `resolve` returns the
rows behind a source for the user who owns them, and None for anyone else.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from marshmallow import ValidationError

from models.db import Database
from tools.finance.cites import FILTERS
from tools.finance.inputs import TransactionsInput
from tools.finance.queries import check_range
from tools.finance.status import account_by_id, budget_by_id
from tools.finance.transactions import rows_matching, transaction_by_id
from tools.registry import ToolInputError

KINDS = ("txn", "txns", "budget", "account")
# The rows a txns: source resolves to, at most (a year of a busy category is a few hundred).
MAX_RESOLVED = 5000
_FILTER_SCHEMA = TransactionsInput(only=FILTERS)


class BadSource(ValueError):
    """A source that is not well-formed: an unknown kind, an id or a filter that does not parse."""


def parse(source: str) -> tuple[str, Any]:
    """Return (kind, id or filters) of a source, or raise BadSource."""
    kind, sep, rest = source.partition(":")
    if not sep or kind not in KINDS:
        raise BadSource(f"unknown source {source!r}: use txn:, txns:, budget: or account:")
    if kind != "txns":
        if not rest.isascii() or not rest.isdigit() or len(rest) > 18:
            raise BadSource(f"{kind}: needs a numeric id, not {rest!r}")
        return kind, int(rest)
    try:
        pairs = parse_qsl(rest, keep_blank_values=True, strict_parsing=bool(rest))
    except ValueError as err:
        raise BadSource(f"txns: needs a query string of filters: {err}") from None
    keys = [k for k, _ in pairs]
    unknown = sorted(set(keys) - set(FILTERS))
    if unknown or len(set(keys)) != len(keys):
        raise BadSource(f"txns: takes each of {', '.join(FILTERS)} at most once")
    raw: dict[str, Any] = dict(pairs)
    for flag in ("pending", "imported"):
        if flag in raw:
            raw[flag] = {"true": True, "false": False}.get(raw[flag], raw[flag])
    try:
        filters = _FILTER_SCHEMA.load(raw)
        check_range(filters.get("start_date"), filters.get("end_date"), "start_date", "end_date")
    except ValidationError as err:
        raise BadSource(f"txns: bad filters: {err.messages}") from None
    except ToolInputError as err:
        raise BadSource(f"txns: bad filters: {err.message}") from None
    return kind, filters


def resolve(db: Database, user_id: int, source: str) -> list[dict[str, Any]] | None:
    """Return the rows behind `source` for `user_id`, or None when it is unknown or not theirs.

    txn:, budget: and account: give one row; txns: every matching transaction, newest first
    (up to MAX_RESOLVED). A malformed source raises BadSource.
    """
    kind, value = parse(source)
    with db.read() as s:
        if kind == "txn":
            row = transaction_by_id(s, user_id, value)
        elif kind == "budget":
            row = budget_by_id(s, user_id, value)
        elif kind == "account":
            row = account_by_id(s, user_id, value)
        else:
            try:
                return rows_matching(s, user_id, value, MAX_RESOLVED)
            except ToolInputError:
                return None  # a category or account this user does not have
    return None if row is None else [row]
