"""What money is: the one rule that says whether a row is spending, a refund, income or a transfer.

Every tool, chart and answer counts money through this module, so a figure means the same
thing wherever it appears, per currency and never mixed:

- a **transfer** moves money between the user's own accounts and is neither spending nor
  income: a row the user marked so, a row in a `transfer` category, or one leg of a pair (one
  row out of an account, one row of the same amount into another of the user's accounts, in
  the same currency, within TRANSFER_DAYS days of each other);
- a **refund** is money coming back for spending: an inflow the user marked so, an inflow in an
  expense category, or an uncategorised inflow at a merchant the user paid at least as much
  in the REFUND_DAYS before it;
- **income** is every other inflow, categorised or not;
- **spending** is every other outflow. Spending after refunds (net spending) is spending less
  refunds.

A refund with no category of its own counts in the category of the purchase it returns (the
latest one it matches): `category_id()` is the category every grouping and filter reads, and
the name a row is shown with.

The user's correction (`Transaction.flow_mark`: transfer, not_transfer, refund, not_refund)
always wins. The rule is one SQL expression, `flow()`, so that a figure, the filter that lists
its rows (`get_transactions`' `flow`) and a cited `txns:` source all select the same rows.
The expressions take no input, so each is built once (`@cache`) and shared by every statement:
building one (its aliases above all) was about 40% of a tool call's CPU in the tests.
Every statement that uses it outer-joins the row's category (`queries.with_category`).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from sqlalchemy import ColumnElement, and_, case, exists, func, literal_column, or_, select
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import aliased
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement
from sqlalchemy.types import Date

from models.finance import Category, Transaction

# Both legs of a transfer post within this many days of each other (a bank transfer can take
# a few working days to land).
TRANSFER_DAYS = 4
# A refund comes back within a year of the purchase it returns.
REFUND_DAYS = 365

SPENDING, REFUND, INCOME, TRANSFER = "spending", "refund", "income", "transfer"
FLOWS = (SPENDING, REFUND, INCOME, TRANSFER)
# A filter value more: spending and its refunds together, whose sum is net spending.
NET_SPENDING = "net_spending"
FILTERS = (*FLOWS, NET_SPENDING)
SELECTS = {
    SPENDING: (SPENDING,),
    REFUND: (REFUND,),
    INCOME: (INCOME,),
    TRANSFER: (TRANSFER,),
    NET_SPENDING: (SPENDING, REFUND),
}


class DayShift(FunctionElement[Any]):
    """A date column moved by a fixed number of days, in each database's own words."""

    type = Date()
    inherit_cache = True
    name = "day_shift"


@compiles(DayShift)
def _shift(element: DayShift, compiler: SQLCompiler, **kw: Any) -> str:
    column, days = list(element.clauses)
    return f"({compiler.process(column, **kw)} + {compiler.process(days, **kw)})"


@compiles(DayShift, "sqlite")
def _shift_sqlite(element: DayShift, compiler: SQLCompiler, **kw: Any) -> str:
    column, days = list(element.clauses)
    return f"date({compiler.process(column, **kw)}, '{compiler.process(days, **kw)} days')"


def shifted(column: Any, days: int) -> DayShift:
    """Return `column` (a date) moved by `days` days (a constant of ours, never input)."""
    return DayShift(column, literal_column(str(int(days))))


@cache
def _mark() -> ColumnElement[str]:
    return func.coalesce(Transaction.flow_mark, "")


@cache
def _other_leg() -> ColumnElement[bool]:
    """Whether another of the user's accounts has the opposite row of this one, days apart."""
    leg = aliased(Transaction, name="leg")
    return exists().where(
        leg.user_id == Transaction.user_id,
        leg.amount_minor == -Transaction.amount_minor,
        leg.account_id != Transaction.account_id,
        leg.currency == Transaction.currency,
        leg.posted_on >= shifted(Transaction.posted_on, -TRANSFER_DAYS),
        leg.posted_on <= shifted(Transaction.posted_on, TRANSFER_DAYS),
        or_(leg.flow_mark.is_(None), leg.flow_mark.not_in(("not_transfer", "refund"))),
    )


def _bought(bought: Any) -> list[ColumnElement[bool]]:
    """The purchases an inflow may return: the same merchant, at least as much, the year before."""
    return [
        bought.user_id == Transaction.user_id,
        bought.currency == Transaction.currency,
        bought.amount_minor <= -Transaction.amount_minor,
        func.lower(func.trim(bought.merchant)) == func.lower(func.trim(Transaction.merchant)),
        bought.posted_on <= Transaction.posted_on,
        bought.posted_on >= shifted(Transaction.posted_on, -REFUND_DAYS),
    ]


@cache
def _bought_before() -> ColumnElement[bool]:
    """Whether the user paid the same merchant at least this much in the year before."""
    return exists().where(*_bought(aliased(Transaction, name="bought")))


@cache
def category_id() -> ColumnElement[int | None]:
    """Return the category a row counts in: its own, or, for an uncategorised inflow that may
    be a refund, that of the latest purchase it returns (None when there is none)."""
    bought = aliased(Transaction, name="returned")
    theirs = (
        select(bought.category_id)
        .where(*_bought(bought), bought.category_id.is_not(None))
        .order_by(bought.posted_on.desc(), bought.id.desc())
        .limit(1)
        .scalar_subquery()
    )
    returned = and_(
        Transaction.category_id.is_(None),
        Transaction.amount_minor > 0,
        _mark().not_in(("not_refund", "transfer")),
    )
    return case((returned, theirs), else_=Transaction.category_id)


@cache
def flow() -> ColumnElement[str]:
    """Return each row's flow: 'spending', 'refund', 'income' or 'transfer' (see the module)."""
    mark, amount = _mark(), Transaction.amount_minor
    return case(
        (mark == "transfer", TRANSFER),
        (and_(mark == "refund", amount > 0), REFUND),
        (
            and_(
                mark.not_in(("not_transfer", "refund")),
                or_(Category.kind == "transfer", and_(amount != 0, _other_leg())),
            ),
            TRANSFER,
        ),
        (amount <= 0, SPENDING),
        (mark == "not_refund", INCOME),
        (Category.kind == "expense", REFUND),
        (and_(Category.id.is_(None), _bought_before()), REFUND),
        else_=INCOME,
    )


@cache
def flow_clause(value: str) -> ColumnElement[bool]:
    """Return the WHERE clause selecting the rows of one `FILTERS` value."""
    return flow().in_(SELECTS[value])


@cache
def net_spending() -> ColumnElement[bool]:
    """Rows that count towards spending: spending (out) and its refunds (in)."""
    return flow_clause(NET_SPENDING)
