"""get_transactions: filtered, sorted, keyset-paginated rows with totals for every match."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import ColumnElement, and_, case, func, or_, select
from sqlalchemy.orm import Session

from domain.money import format_minor
from models.finance import Account, Category, Transaction
from tools.finance import cursor as cursors
from tools.finance.cites import FILTERS, transaction_result, txns_result
from tools.finance.flows import flow, flow_clause
from tools.finance.periods import resolve as resolve_period
from tools.finance.queries import (
    amount_clause,
    category_clause,
    check_range,
    period_clause,
    resolve_account,
    resolve_category,
    with_category,
)
from tools.registry import Sourced, ToolContext

# Well under the registry's MAX_RESULT_CHARS, leaving room for totals and the note.
MAX_PAGE_CHARS = 40_000
# The page's first rows are search results too (each costs tokens on every later call).
ROW_SOURCES = 10


def get_transactions(ctx: ToolContext, data: dict[str, Any]) -> Sourced:
    """Return one page of the user's matching transactions and totals over all matches.

    Its search results: the totals over every match (a txns: source), then the page's rows.
    """
    check_range(data.get("start_date"), data.get("end_date"), "start_date", "end_date")
    sort, limit = data["sort"], data["limit"]
    filters = {k: data[k] for k in FILTERS if data.get(k) is not None}
    fp = cursors.fingerprint(ctx.user_id, sort, filters)
    by_date = sort.startswith("date")
    after = cursors.decode(data["cursor"], fp, by_date) if data.get("cursor") else None
    with ctx.db.read() as s:
        where = _where(s, ctx.user_id, data)
        totals = _totals(s, ctx.user_id, where)
        rows = _page(s, ctx.user_id, where, sort, after, limit + 1)
        named = _canonical(s, ctx.user_id, filters)
        period = resolve_period(s, ctx.user_id, data.get("start_date"), data.get("end_date"))
    page = _fit([transaction_row(*r) for r in rows[:limit]])
    has_more = len(rows) > len(page)
    count = sum(t["count"] for t in totals)
    out: dict[str, Any] = {
        "period": period.stated(),
        "count": count,
        "returned": len(page),
        "sort": sort,
        "transactions": page,
        "totals": totals,
        "has_more": has_more,
        "next_cursor": None,
    }
    if has_more:
        last = rows[len(page) - 1][0]
        key = last.posted_on if by_date else abs(last.amount_minor)
        out["next_cursor"] = cursors.encode(fp, key, last.id)
        out["truncated"] = True
        out["note"] = (
            f"Showing {len(page)} of {count} matching transactions (totals cover all {count}). "
            "Call again with the same filters and cursor=next_cursor for the next page."
        )
    rows_cited = map(transaction_result, page[:ROW_SOURCES])
    return Sourced(out, [txns_result(named, totals), *rows_cited])


def _canonical(s: Session, user_id: int, filters: dict[str, Any]) -> dict[str, Any]:
    """Return `filters` with the category and account named as the user's own names are."""
    out = dict(filters)
    if "category" in out:
        out["category"] = resolve_category(s, user_id, out["category"]).name
    if "account" in out:
        account = s.get(Account, resolve_account(s, user_id, out["account"]))
        out["account"] = account.name if account is not None else out["account"]
    return out


def rows_matching(
    s: Session, user_id: int, data: dict[str, Any], limit: int
) -> list[dict[str, Any]]:
    """Return up to `limit` of the user's transactions matching get_transactions filters."""
    check_range(data.get("start_date"), data.get("end_date"), "start_date", "end_date")
    where = _where(s, user_id, data)
    return [transaction_row(*r) for r in _page(s, user_id, where, "date_desc", None, limit)]


def transaction_by_id(s: Session, user_id: int, transaction_id: int) -> dict[str, Any] | None:
    """Return the user's transaction `transaction_id` as the tools show it, or None."""
    return transactions_by_ids(s, user_id, [transaction_id]).get(transaction_id)


def transactions_by_ids(s: Session, user_id: int, ids: list[int]) -> dict[int, dict[str, Any]]:
    """Return the user's transactions among `ids` as the tools show them, by id."""
    if not ids:
        return {}
    found = s.execute(
        with_category(
            select(Transaction, Category.name, Account.name, flow()).join(
                Account, and_(Account.id == Transaction.account_id, Account.user_id == user_id)
            ),
            user_id,
        ).where(Transaction.user_id == user_id, Transaction.id.in_(ids))
    )
    return {
        t.id: transaction_row(t, category, account, kind) for t, category, account, kind in found
    }


def _fit(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep leading rows within MAX_PAGE_CHARS of JSON, so the registry never cuts a result."""
    size = 0
    for index, row in enumerate(rows):
        size += len(json.dumps(row, separators=(",", ":"))) + 1
        if size > MAX_PAGE_CHARS and index > 0:
            return rows[:index]
    return rows


def _where(s: Session, user_id: int, data: dict[str, Any]) -> list[ColumnElement[bool]]:
    where = [
        Transaction.user_id == user_id,
        *period_clause(data.get("start_date"), data.get("end_date")),
    ]
    if data.get("category") is not None:
        where.append(category_clause(resolve_category(s, user_id, data["category"])))
    if data.get("account") is not None:
        where.append(Transaction.account_id == resolve_account(s, user_id, data["account"]))
    if data.get("merchant") is not None:
        where.append(
            func.lower(Transaction.merchant).contains(data["merchant"].lower(), autoescape=True)
        )
    if data.get("direction") == "out":
        where.append(Transaction.amount_minor < 0)
    elif data.get("direction") == "in":
        where.append(Transaction.amount_minor > 0)
    if data.get("flow") is not None:
        where.append(flow_clause(data["flow"]))
    if data.get("ids") is not None:
        where.append(Transaction.id.in_([int(n) for n in data["ids"].split(",")]))
    if data.get("min_amount") is not None:
        where.append(amount_clause(data["min_amount"], minimum=True))
    if data.get("max_amount") is not None:
        where.append(amount_clause(data["max_amount"], minimum=False))
    if data.get("pending") is not None:
        where.append(Transaction.pending.is_(data["pending"]))
    if data.get("imported") is not None:
        column = Transaction.import_id
        where.append(column.is_not(None) if data["imported"] else column.is_(None))
    return where


def _totals(s: Session, user_id: int, where: list[ColumnElement[bool]]) -> list[dict[str, Any]]:
    amount = Transaction.amount_minor
    columns = select(
        Transaction.currency,
        func.sum(amount),
        func.sum(case((amount < 0, amount), else_=0)),
        func.sum(case((amount > 0, amount), else_=0)),
        func.count(),
    )
    stmt = (
        with_category(columns, user_id)
        .where(*where)
        .group_by(Transaction.currency)
        .order_by(Transaction.currency)
    )
    return [
        {
            "currency": cur,
            "net": format_minor(int(net), cur),
            "money_out": format_minor(int(out), cur),
            "money_in": format_minor(int(in_), cur),
            "count": int(n),
        }
        for cur, net, out, in_, n in s.execute(stmt)
    ]


def _page(
    s: Session,
    user_id: int,
    where: list[ColumnElement[bool]],
    sort: str,
    after: tuple[Any, int] | None,
    limit: int,
) -> list[Any]:
    key: Any = (
        Transaction.posted_on if sort.startswith("date") else func.abs(Transaction.amount_minor)
    )
    descending = sort.endswith("desc")
    stmt = with_category(
        select(Transaction, Category.name, Account.name, flow()).join(
            Account, and_(Account.id == Transaction.account_id, Account.user_id == user_id)
        ),
        user_id,
    ).where(*where)
    if after is not None:
        value, row_id = after
        if descending:
            stmt = stmt.where(or_(key < value, and_(key == value, Transaction.id < row_id)))
        else:
            stmt = stmt.where(or_(key > value, and_(key == value, Transaction.id > row_id)))
    order = (key.desc(), Transaction.id.desc()) if descending else (key.asc(), Transaction.id.asc())
    return list(s.execute(stmt.order_by(*order).limit(limit)))


def transaction_row(
    t: Transaction, category: str | None, account: str, kind: str | None = None
) -> dict[str, Any]:
    """A transaction as the tools return it; `kind` is its flow by the money rule, when known."""
    row: dict[str, Any] = {
        "id": t.id,
        "date": t.posted_on.isoformat(),
        "amount": format_minor(t.amount_minor, t.currency),
        "currency": t.currency,
        "merchant": t.merchant,
        "description": t.description,
        "category": category,
        "account": account,
        "pending": t.pending,
    }
    if kind is not None:
        row["flow"] = kind
        if t.flow_mark is not None:
            row["flow_marked"] = t.flow_mark
    return row
