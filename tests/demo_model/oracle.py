"""The figures a right answer quotes, from the tools called directly and from the database."""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from sqlalchemy import select

from domain.money import format_minor
from models.finance import Category, Transaction
from tests.demo_model.conftest import Seeded, figures

Figures = set[tuple[Decimal, str]]
Span = dict[str, str]


def span(start: str, end: str) -> Span:
    """Return a tool date range."""
    return {"start_date": start, "end_date": end}


def quoted(value: str, currency: str) -> tuple[Decimal, str]:
    """Return a tool amount as an answer quotes it: unsigned, with its currency."""
    return abs(Decimal(value)), currency


class Oracle:
    """Works out, independently of the demo model, the figures each kind of answer must quote."""

    def __init__(self, seeded: Seeded) -> None:
        self.seeded = seeded
        self.tools = seeded.tools()

    def category(self, name: str, when: Span) -> Figures:
        """Net spending on one category, per currency."""
        summary = self.tools("get_spending_summary", **when, top_n=50)
        return {
            quoted(g["spent"], b["currency"])
            for b in summary["currencies"]
            for g in b["groups"]
            if g["key"] == name
        }

    def merchant(self, name: str, when: Span) -> Figures:
        """Net amount at one merchant, per currency."""
        found = self.tools("get_transactions", **when, merchant=name, limit=1)
        return {quoted(t["net"], t["currency"]) for t in found["totals"]}

    def total(self, when: Span) -> Figures:
        """All spending of a period, per currency."""
        summary = self.tools("get_spending_summary", **when, top_n=50)
        return {quoted(b["total_spent"], b["currency"]) for b in summary["currencies"]}

    def income(self, when: Span) -> Figures:
        """Money in to income categories (the database's own category kinds): total and each."""
        rows = self._rows(when, Category.kind == "income", Transaction.amount_minor > 0)
        per: dict[tuple[str, str], int] = defaultdict(int)
        total: dict[str, int] = defaultdict(int)
        for t, name in rows:
            per[(name, t.currency)] += t.amount_minor
            total[t.currency] += t.amount_minor
        found = {quoted(format_minor(v, cur), cur) for (_, cur), v in per.items()}
        return found | {quoted(format_minor(v, cur), cur) for cur, v in total.items()}

    def refunds(
        self, when: Span, merchant: str | None = None, category: str | None = None
    ) -> Figures:
        """Money back in expense categories: each refund and the total per currency."""
        where = [Category.kind == "expense", Transaction.amount_minor > 0]
        if category:
            where.append(Category.name == category)
        rows = [
            (t, n)
            for t, n in self._rows(when, *where)
            if merchant is None or merchant.lower() in t.merchant.lower()
        ]
        total: dict[str, int] = defaultdict(int)
        for t, _ in rows:
            total[t.currency] += t.amount_minor
        found = {quoted(format_minor(t.amount_minor, t.currency), t.currency) for t, _ in rows}
        return found | {quoted(format_minor(v, cur), cur) for cur, v in total.items()}

    def budget(self, month: str, category: str | None = None) -> Figures:
        """Spent and limit of the asked budget, or of those over (else the fullest one)."""
        rows = self.tools("get_budget_status", month=month)["budgets"]
        if category:
            rows = [r for r in rows if r["category"] == category]
        else:
            over = [r for r in rows if r["status"] == "over"]
            rows = over or sorted(rows, key=lambda r: -Decimal(r["percent_used"]))[:1]
        return {quoted(r[k], r["currency"]) for r in rows for k in ("spent", "limit")}

    def balances(self) -> Figures:
        """The balance total of each currency."""
        found = self.tools("get_account_balances")
        return {quoted(t["balance"], t["currency"]) for t in found["totals"]}

    def largest(self, when: Span) -> Figures:
        """The five largest purchases (transfers between own accounts are not purchases)."""
        summary = self.tools("get_spending_summary", **when, top_n=50)
        spend = {g["key"] for b in summary["currencies"] for g in b["groups"]}
        rows = self.tools("get_transactions", **when, direction="out", sort="amount_desc", limit=50)
        kept = [r for r in rows["transactions"] if r["category"] in spend][:5]
        return {quoted(r["amount"], r["currency"]) for r in kept}

    def compare(self, before: Span, after: Span, category: str | None = None) -> Figures:
        """Both periods' spending (of one category, or in total), per currency."""
        found = self.tools(
            "compare_spending",
            period_a_start=before["start_date"],
            period_a_end=before["end_date"],
            period_b_start=after["start_date"],
            period_b_end=after["end_date"],
        )
        out: Figures = set()
        for block in found["currencies"]:
            cur = block["currency"]
            rows = [r for r in block["categories"] if r["category"] == category]
            for row in rows if category else [block]:
                out |= {quoted(row["period_a"], cur), quoted(row["period_b"], cur)}
        return out

    def recurring(self) -> Figures:
        """The estimated monthly total of active recurring payments, per currency."""
        found = self.tools("find_recurring_payments")
        return {quoted(t["amount"], t["currency"]) for t in found["estimated_monthly_total"]}

    def average(self, name: str, when: Span, months: int) -> Figures:
        """A category's net spending over whole months, divided by their number, per currency."""
        return {
            ((total / months).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP), cur)
            for total, cur in self.category(name, when)
        }

    def top_merchants(self, when: Span, top: int) -> Figures:
        """The net at each of the `top` merchants with the most spending."""
        summary = self.tools("get_spending_summary", **when, group_by="merchant", top_n=50)
        names = list(dict.fromkeys(g["key"] for b in summary["currencies"] for g in b["groups"]))
        return {f for name in names[:top] for f in self.merchant(name, when)}

    def pending(self) -> Figures:
        """Each pending transaction's amount, and their net per currency."""
        found = self.tools("get_transactions", pending=True, limit=200)
        rows = {quoted(r["amount"], r["currency"]) for r in found["transactions"]}
        return rows | {quoted(t["net"], t["currency"]) for t in found["totals"]}

    def _rows(self, when: Span, *where: Any) -> list[tuple[Transaction, str]]:
        start, end = date.fromisoformat(when["start_date"]), date.fromisoformat(when["end_date"])
        with self.seeded.db.read() as s:
            stmt = (
                select(Transaction, Category.name)
                .join(Category, Category.id == Transaction.category_id)
                .where(
                    Transaction.user_id == self.seeded.user_id,
                    Transaction.posted_on >= start,
                    Transaction.posted_on <= end,
                    *where,
                )
            )
            return [(t, name) for t, name in s.execute(stmt)]


def stated(results: list[Any]) -> Figures:
    """Return every figure the tool results of a turn state."""
    out: Figures = set()
    for result in results:
        out |= figures(result)
    return out
