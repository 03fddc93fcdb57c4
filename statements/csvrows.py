"""One CSV row read by its plan: date, amount (signed as the layout says: a signed column,
debit and credit columns, an indicator column, a fee, charges written positive), currency,
payee and the local amount of a payment abroad; and the balances a running-balance column
states."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from statements.amounts import NumberStyle, quoted
from statements.columns import datelike, normalise
from statements.dates import DateStyle
from statements.parsed import ParsedRow

# Status cells of rows that did not move the balance (normalised).
NOT_BOOKED = frozenset(
    (
        "pending", "vorgemerkt", "umsatzvorgemerkt", "memo", "declined", "reverted", "failed",
        "cancelled", "canceled", "refused", "refuse", "rejected", "denied", "geweigerd",
        "authorised", "authorized", "notbooked", "nichtgebucht",
    )
)  # fmt: skip
DEBITS = frozenset(("d", "dr", "debit", "debet", "s", "soll", "af", "dbit", "out", "ausgang"))
CREDITS = frozenset(("c", "cr", "credit", "h", "haben", "bij", "crdt", "in", "eingang"))
# First cells of summary lines above or below the rows (an opening or closing balance).
SUMMARY = (
    "kontostand", "neuerkontostand", "alterkontostand", "saldo", "anfangssaldo", "endsaldo",
    "openingbalance", "closingbalance", "endingbalance", "beginningbalance", "total", "summe",
)  # fmt: skip
BALANCE_WORDS = ("balance", "saldo", "kontostand")
_CODE = re.compile(r"[A-Z]{3}")


@dataclass
class Plan:
    """How each row of one file is read."""

    index: dict[str, int]
    columns: list[str]
    numbers: NumberStyle
    dates: DateStyle
    currency: str | None
    charges_positive: bool
    # Bank ids the file gives more than one row (such rows are told apart by occurrence).
    repeated: set[str] = field(default_factory=set)

    def cell(self, cells: list[str], role: str) -> str:
        """The row's cell of `role`, stripped ("" when the role has no column)."""
        at = self.index.get(role)
        return cells[at].strip() if at is not None and at < len(cells) else ""

    def balance_of(self, cells: list[str]) -> int | None:
        """The running balance the row states, or None."""
        text = self.cell(cells, "balance")
        if not text:
            return None
        try:
            return self.numbers.minor(text, self.currency)
        except ValueError:
            return None


def read_row(line: int, cells: list[str], plan: Plan) -> ParsedRow:
    """The row of line `line`; `reason` says why it is invalid or not booked."""
    size = len(cells)
    value = {role: cells[at].strip() for role, at in plan.index.items() if at < size}.get
    payee, payer, description = value("payee", ""), value("payer", ""), value("description", "")
    code = value("currency", "").upper()
    row = ParsedRow(
        line,
        None,
        None,
        merchant=(payee or payer or description)[:120],
        description=description[:255],
        bank_id=plan.cell(cells, "bank_id")[:255] or None,
        currency=code if _CODE.fullmatch(code) else plan.currency,
    )
    width = len(plan.columns)
    if len(cells) > width and any(c.strip() for c in cells[width:]):
        row.reason = f"line {line}: {len(cells)} fields where the header has {width}"
        return row
    status = value("status", "")
    if status and normalise(status) in NOT_BOOKED:
        row.reason = f"line {line}: not booked ({plan.columns[plan.index['status']]} is {status})"
        return row
    try:
        row.posted_on = plan.dates.parse(value("date", ""))
    except ValueError as err:
        row.reason = f'line {line}, column "{plan.columns[plan.index["date"]]}": {err}'
        return row
    try:
        row.amount_minor, named = _amount(value, plan, row.currency)
    except ValueError as err:
        row.reason = f"line {line}: {err}"
        return row
    row.currency = named or row.currency
    if row.amount_minor > 0 and payer:
        row.merchant = payer[:120]
    elif payee:
        row.merchant = payee[:120]
    local = _local(value("local_amount", ""), value("local_currency", "").upper(), row.currency)
    if local:
        row.description = f"{description} ({local})".strip()[:255]
    return row


def _amount(
    value: Callable[[str, str], str], plan: Plan, currency: str | None
) -> tuple[int, str | None]:
    read = plan.numbers.read
    text = value("amount", "")
    debit, credit = value("debit", ""), value("credit", "")
    if text:
        found = read(text, currency)
        minor, named = found.minor, found.currency
    elif debit or credit:
        out = read(debit, currency) if debit else None
        into = read(credit, currency) if credit else None
        minor = (abs(into.minor) if into else 0) - (abs(out.minor) if out else 0)
        named = (out.currency if out else None) or (into.currency if into else None)
    else:
        raise ValueError("it has no amount")
    indicator = value("indicator", "")
    if indicator:
        key = normalise(indicator) or indicator.strip()
        if key in DEBITS or indicator.strip() == "-":
            minor = -abs(minor)
        elif key in CREDITS or indicator.strip() == "+":
            minor = abs(minor)
        else:
            raise ValueError(f"{quoted(indicator)} says neither debit nor credit")
    fee = value("fee", "")
    if fee:
        minor -= abs(read(fee, named or currency).minor)
    return (-minor if plan.charges_positive else minor), named


def _local(amount: str, code: str, currency: str | None) -> str:
    """`-61000.00 IDR` for a payment abroad; "" when the local currency is the row's."""
    if not amount or not code or code == currency:
        return ""
    return f"{amount[:30]} {code[:3]}"


def skipped(cells: list[str], plan: Plan) -> bool:
    """A summary line among the rows (a bank's opening or closing balance): not a movement."""
    day = plan.cell(cells, "date")
    if not day[:1].isdigit() and not datelike(day):
        filled = [c for c in cells if c.strip()]
        # A lone cell is a label (`Posted Transactions`, an end mark) or the wrapped end of
        # the row above's text; a row with neither date nor amount is no movement either.
        return (
            len(filled) == 1
            or not _has_amount(cells, plan)
            or normalise(filled[0]).startswith(SUMMARY)
        )
    if _has_amount(cells, plan):
        return False
    text = normalise(plan.cell(cells, "payee") + plan.cell(cells, "description"))
    return any(word in text for word in BALANCE_WORDS)


def _has_amount(cells: list[str], plan: Plan) -> bool:
    cell = plan.cell
    return bool(cell(cells, "amount") or cell(cells, "debit") or cell(cells, "credit"))


class Balances:
    """The opening and closing balance a running-balance column states, found in one pass:
    each row's balance must be the one before it plus its amount (oldest first) or the one
    after it plus its amount (newest first); a row without a balance stops the claim."""

    def __init__(self) -> None:
        self.first: tuple[int, int] | None = None
        self.last: tuple[int, int] | None = None
        self.ascending = self.descending = True
        self.broken = False

    def add(self, amount: int, balance: int | None) -> None:
        """One booked row's amount and the balance it states."""
        if balance is None:
            self.broken = True
            return
        if self.last is not None:
            before_amount, before = self.last
            self.ascending = self.ascending and balance == before + amount
            self.descending = self.descending and before == balance + before_amount
        else:
            self.first = (amount, balance)
        self.last = (amount, balance)

    def stated(self) -> tuple[int | None, int | None]:
        """(opening, closing), or (None, None) when the column states none that holds."""
        if self.broken or self.first is None or self.last is None:
            return None, None
        if self.ascending:
            return self.first[1] - self.first[0], self.last[1]
        if self.descending:
            return self.last[1] - self.last[0], self.first[1]
        return None, None
