"""The figures a right answer quotes, from the tools called directly and from the database."""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from sqlalchemy import select

from domain.money import format_minor
from models.finance import Account, Category, Transaction
from tests.demo_model.conftest import Seeded, figures
from tests.tools.money_oracle import Money, flows

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
        """Net spending at one merchant (spending less refunds), per currency."""
        found = self.tools("get_transactions", **when, merchant=name, flow="net_spending", limit=1)
        return {quoted(t["net"], t["currency"]) for t in found["totals"]}

    def total(self, when: Span) -> Figures:
        """All spending of a period, per currency."""
        summary = self.tools("get_spending_summary", **when, top_n=50)
        return {quoted(b["total_spent"], b["currency"]) for b in summary["currencies"]}

    def income(self, when: Span) -> Figures:
        """Income by the money rule (worked out from the rows): each category's and the total."""
        per: dict[tuple[str, str], int] = defaultdict(int)
        for t, name in self._flow(when, "income"):
            per[(name or "Uncategorized", t.currency)] += t.amount_minor
        return {quoted(format_minor(v, cur), cur) for (_, cur), v in per.items()} | (
            self.income_total(when)
        )

    def income_total(self, when: Span) -> Figures:
        """Income by the money rule, per currency."""
        total: dict[str, int] = defaultdict(int)
        for t, _ in self._flow(when, "income"):
            total[t.currency] += t.amount_minor
        return {quoted(format_minor(v, cur), cur) for cur, v in total.items()}

    def refunds(
        self, when: Span, merchant: str | None = None, category: str | None = None
    ) -> Figures:
        """Refunds by the money rule: each refund and the total per currency."""
        rows = [
            t
            for t, name in self._flow(when, "refund")
            if (merchant is None or merchant.lower() in t.merchant.lower())
            and (category is None or name == category)
        ]
        total: dict[str, int] = defaultdict(int)
        for t in rows:
            total[t.currency] += t.amount_minor
        found = {quoted(format_minor(t.amount_minor, t.currency), t.currency) for t in rows}
        return found | {quoted(format_minor(v, cur), cur) for cur, v in total.items()}

    def _flow(self, when: Span, kind: str) -> list[tuple[Transaction, str | None]]:
        """The rows of one flow in a period, by the rule worked out from every row."""
        start, end = date.fromisoformat(when["start_date"]), date.fromisoformat(when["end_date"])
        with self.seeded.db.read() as s:
            found = s.execute(
                select(Transaction, Category.name, Category.kind, Account.name)
                .join(Account, Account.id == Transaction.account_id)
                .outerjoin(Category, Category.id == Transaction.category_id)
                .where(Transaction.user_id == self.seeded.user_id)
            ).all()
            rule = flows(
                [
                    Money(t.id, t.posted_on, t.amount_minor, t.currency, account, t.merchant,
                          kind_, t.flow_mark)
                    for t, _, kind_, account in found
                ]
            )  # fmt: skip
            return [
                (t, name)
                for t, name, _, _ in found
                if rule[t.id] == kind and start <= t.posted_on <= end
            ]

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

    def subscriptions(self, category: str = "Subscriptions") -> Figures:
        """The estimated monthly total of the subscriptions category's payments alone."""
        found = self.tools("find_recurring_payments", category=category, direction="out")
        return {quoted(t["amount"], t["currency"]) for t in found["estimated_monthly_total"]}

    def series(self, name: str) -> Figures:
        """A recurring series' next expected amount."""
        found = self.tools("find_recurring_payments")["recurring"]
        return {
            quoted(s["next_expected_amount"], s["currency"]) for s in found if s["name"] == name
        }

    def price_changes(self) -> Figures:
        """The prices before and after each price change of a recurring series."""
        found = self.tools("find_recurring_payments")["recurring"]
        return {
            quoted(c[k], s["currency"])
            for s in found
            for c in s["price_changes"]
            for k in ("from", "to")
        }

    def forecast(self, day: str) -> Figures:
        """Each account's balance today and projected to `day`, and each currency's total."""
        found = self.tools("forecast_balance", date=day)
        accounts = {
            quoted(a[k], a["currency"])
            for a in found["accounts"]
            for k in ("balance_today", "projected_balance")
        }
        return accounts | {
            quoted(t[k], t["currency"])
            for t in found["totals"]
            for k in ("balance_today", "projected_balance")
        }

    def bills(self, days: int) -> Figures:
        """The recurring payments due in the next `days` days, and their total."""
        found = self.tools("get_upcoming_bills", days=days)
        due = {quoted(b["amount"], b["currency"]) for b in found["bills"]}
        return due | {quoted(t["amount"], t["currency"]) for t in found["totals"]}

    def average(self, name: str, when: Span, months: int) -> Figures:
        """A category's net spending over whole months, divided by their number, per currency."""
        return {
            ((total / months).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP), cur)
            for total, cur in self.category(name, when)
        }

    def average_total(self, when: Span, months: int) -> Figures:
        """All net spending over whole months, divided by their number, per currency."""
        return {
            ((total / months).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP), cur)
            for total, cur in self.total(when)
        }

    def top_merchants(self, when: Span, top: int) -> Figures:
        """Each currency's `top` merchants with the most spending: their net in that currency."""
        summary = self.tools("get_spending_summary", **when, group_by="merchant", top_n=50)
        return {
            f
            for b in summary["currencies"]
            for g in b["groups"][:top]
            for f in self.merchant(g["key"], when)
            if f[1] == b["currency"]
        }

    def pending(self) -> Figures:
        """Each pending transaction's amount, and their net per currency."""
        found = self.tools("get_transactions", pending=True, limit=200)
        rows = {quoted(r["amount"], r["currency"]) for r in found["transactions"]}
        return rows | {quoted(t["net"], t["currency"]) for t in found["totals"]}


def stated(results: list[Any]) -> Figures:
    """Return every figure the tool results of a turn state."""
    out: Figures = set()
    for result in results:
        out |= figures(result)
    return out
