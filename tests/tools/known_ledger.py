"""A known ledger built over the API: two currencies, 18 months, and its true figures by hand.

Rows (all posted; `None` category: imported without one):

- Main (GBP checking, opens 1000.00): rent 900.00 to Oakwood Lettings on the 1st (Rent);
  salary 2500.00 from Globex Payroll on the 25th (no category); 300.00 to Savings on the 28th;
  on the 10th, the Card's charges of the month before; freelance 400.00 from Brightfield Ltd in
  September 2025 and February 2026 (no category); Admiral Insurance 240.00 on 3 March 2025
  and 2026 (Insurance).
- Savings (GBP, opens 5000.00): 300.00 from Main on the 28th (no category).
- Card (GBP credit card, opens 0.00): Netflix on the 5th, 10.99 through December 2025, then
  12.99 (Subscriptions); Tesco on the 8th and the 22nd (Groceries); an extra Tesco 60.00 on
  12 June 2025, returned on 19 June (no category), and 5.00 back from Tesco on 15 March 2026
  (Groceries); the payment from Main on the 10th (no category).
- Euro (EUR checking, opens 200.00): Gym Berlin 30.00 on the 2nd (no category); an Airbnb
  payout of 150.00 on 20 August 2025 (no category). It ends overdrawn.

Today is 30 June 2026. The truth below is worked out from these rows alone, by the rule as
docs/tools.md states it, never by the code under test.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

TODAY = date(2026, 6, 30)
MONTHS = [date(2025 + (m // 12), m % 12 + 1, 1) for m in range(18)]  # Jan 2025 .. Jun 2026
ACCOUNTS = [  # name, kind, currency, opening balance
    ("Main", "checking", "GBP", Decimal("1000.00")),
    ("Savings", "savings", "GBP", Decimal("5000.00")),
    ("Card", "credit_card", "GBP", Decimal("0.00")),
    ("Euro", "checking", "EUR", Decimal("200.00")),
]
CATEGORIES = [
    ("Rent", "expense"),
    ("Groceries", "expense"),
    ("Subscriptions", "expense"),
    ("Insurance", "expense"),
]


@dataclass(frozen=True)
class Row:
    """One row as posted over the API; `kind` is its truth: spending, refund, income, transfer."""

    day: date
    account: str
    amount: Decimal
    merchant: str
    category: str | None
    kind: str

    @property
    def currency(self) -> str:
        """The row's currency: its account's."""
        return next(cur for name, _, cur, _ in ACCOUNTS if name == self.account)


def netflix(month: date) -> Decimal:
    """Netflix's price: 10.99, then 12.99 from January 2026."""
    return Decimal("10.99") if month < date(2026, 1, 1) else Decimal("12.99")


def tesco(month_index: int) -> tuple[Decimal, Decimal]:
    """The two grocery trips of a month: on the 8th and the 22nd."""
    return Decimal(40 + month_index), Decimal(55 + 2 * (month_index % 5))


def rows() -> list[Row]:
    """Every row of the ledger, in the order they are posted."""
    out: list[Row] = []
    card_charges: dict[date, Decimal] = {}
    for i, month in enumerate(MONTHS):
        first, second = tesco(i)
        charges = [
            Row(month.replace(day=5), "Card", -netflix(month), "Netflix", "Subscriptions",
                "spending"),
            Row(month.replace(day=8), "Card", -first, "Tesco", "Groceries", "spending"),
            Row(month.replace(day=22), "Card", -second, "Tesco", "Groceries", "spending"),
        ]  # fmt: skip
        if month == date(2025, 6, 1):
            charges.append(Row(date(2025, 6, 12), "Card", Decimal(-60), "Tesco", "Groceries",
                               "spending"))  # fmt: skip
        card_charges[month] = -sum((r.amount for r in charges), Decimal(0))
        out += [
            Row(month.replace(day=1), "Main", Decimal(-900), "Oakwood Lettings", "Rent",
                "spending"),
            Row(month.replace(day=2), "Euro", Decimal(-30), "Gym Berlin", None, "spending"),
            *charges,
            Row(month.replace(day=25), "Main", Decimal(2500), "Globex Payroll", None, "income"),
            Row(month.replace(day=28), "Main", Decimal(-300), "To Savings", None, "transfer"),
            Row(month.replace(day=28), "Savings", Decimal(300), "From Main", None, "transfer"),
        ]  # fmt: skip
        if i > 0:
            paid = card_charges[MONTHS[i - 1]]
            out += [
                Row(month.replace(day=10), "Main", -paid, "Card payment", None, "transfer"),
                Row(month.replace(day=10), "Card", paid, "Payment thank you", None, "transfer"),
            ]
    out += [
        Row(date(2025, 6, 19), "Card", Decimal(60), "Tesco", None, "refund"),
        Row(date(2026, 3, 15), "Card", Decimal(5), "Tesco", "Groceries", "refund"),
        Row(date(2025, 9, 15), "Main", Decimal(400), "Brightfield Ltd", None, "income"),
        Row(date(2026, 2, 15), "Main", Decimal(400), "Brightfield Ltd", None, "income"),
        Row(date(2025, 8, 20), "Euro", Decimal(150), "Airbnb Payout", None, "income"),
        Row(date(2025, 3, 3), "Main", Decimal(-240), "Admiral Insurance", "Insurance", "spending"),
        Row(date(2026, 3, 3), "Main", Decimal(-240), "Admiral Insurance", "Insurance", "spending"),
    ]
    return out


def total(kind: str, currency: str, start: date = date(2000, 1, 1), end: date = TODAY) -> Decimal:
    """The signed sum of the rows of one truth in one currency, over a period."""
    return sum(
        (r.amount for r in rows() if r.kind == kind and r.currency == currency
         and start <= r.day <= end),
        Decimal(0),
    )  # fmt: skip


def balance(account: str) -> Decimal:
    """An account's balance today: its opening plus its rows."""
    opening = next(b for name, _, _, b in ACCOUNTS if name == account)
    return opening + sum((r.amount for r in rows() if r.account == account), Decimal(0))


# The recurring series a detector must find (money out and in; transfers are not money spent or
# earned, so they are listed only on request), by name and cadence, and what comes next.
SERIES = {
    "Oakwood Lettings": ("monthly", "2026-07-01", "900.00"),
    "Globex Payroll": ("monthly", "2026-07-25", "2500.00"),
    "Netflix": ("monthly", "2026-07-05", "12.99"),
    "Gym Berlin": ("monthly", "2026-07-02", "30.00"),
    "Admiral Insurance": ("yearly", "2027-03-03", "240.00"),
}
FORECAST_DAY = date(2026, 7, 31)


def forecast() -> dict[str, Decimal]:
    """Each account's balance on 31 July 2026: today's, plus the series due by then (the move
    to savings included; the card's varying payment is not, nor are the groceries)."""
    moves = {
        "Main": Decimal(-900 + 2500 - 300),  # rent on the 1st, salary the 25th, savings the 28th
        "Savings": Decimal(300),
        "Card": -netflix(date(2026, 7, 1)),  # Netflix on the 5th
        "Euro": Decimal(-30),  # the gym on the 2nd
    }
    return {name: balance(name) + moves[name] for name, _, _, _ in ACCOUNTS}
