"""Category rules the user keeps (payee contains, amount range -> category), run on every draft."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from domain.errors import NotFound, Unprocessable
from domain.money import to_decimal
from models import Category, CategoryRule
from models.db import Database


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule as drafts apply it."""

    category: str
    payee_contains: str | None
    min_amount: Decimal | None
    max_amount: Decimal | None

    def fits(self, text: str, amount_minor: int, currency: str) -> bool:
        """True when the row's payee text and signed amount meet every condition."""
        if self.payee_contains is not None and self.payee_contains.casefold() not in text:
            return False
        amount = to_decimal(amount_minor, currency)
        if self.min_amount is not None and amount < self.min_amount:
            return False
        return self.max_amount is None or amount <= self.max_amount


def rules_of(s: Session, user_id: int) -> list[Rule]:
    """The user's rules, oldest first: the first that fits a row names its category."""
    found = s.execute(
        select(CategoryRule, Category.name)
        .join(Category, Category.id == CategoryRule.category_id)
        .where(CategoryRule.user_id == user_id)
        .order_by(CategoryRule.id)
    )
    return [Rule(name, r.payee_contains, r.min_amount, r.max_amount) for r, name in found]


def category_for(
    rules: list[Rule], merchant: str, description: str, amount: int, currency: str
) -> str | None:
    """The category of the first rule that fits the row, or None."""
    text = f"{merchant} {description}".casefold()
    for rule in rules:
        if rule.fits(text, amount, currency):
            return rule.category
    return None


def listing(db: Database, user_id: int) -> list[dict[str, Any]]:
    """The user's rules as the API shows them."""
    with db.read() as s:
        found = s.execute(
            select(CategoryRule, Category.name)
            .join(Category, Category.id == CategoryRule.category_id)
            .where(CategoryRule.user_id == user_id)
            .order_by(CategoryRule.id)
        )
        return [_shown(rule, name) for rule, name in found]


def create(db: Database, user_id: int, data: dict[str, Any]) -> dict[str, Any]:
    """Keep a rule; it names one of the user's categories and at least one condition."""
    if all(data.get(k) is None for k in ("payee_contains", "min_amount", "max_amount")):
        raise Unprocessable(
            "A rule needs payee_contains, min_amount or max_amount.", field="payee_contains"
        )
    low, high = data.get("min_amount"), data.get("max_amount")
    if low is not None and high is not None and low > high:
        raise Unprocessable("min_amount is above max_amount.", field="min_amount")
    with db.transaction() as s:
        category = s.scalar(
            select(Category).where(Category.user_id == user_id, Category.name == data["category"])
        )
        if category is None:
            raise Unprocessable(f"No category named {data['category']!r}.", field="category")
        rule = CategoryRule(
            user_id=user_id,
            category_id=category.id,
            payee_contains=data.get("payee_contains"),
            min_amount=low,
            max_amount=high,
        )
        s.add(rule)
        s.flush()
        return _shown(rule, category.name)


def delete(db: Database, user_id: int, rule_id: int) -> None:
    """Forget one of the user's rules."""
    with db.transaction() as s:
        rule = s.get(CategoryRule, rule_id)
        if rule is None or rule.user_id != user_id:
            raise NotFound("rule", str(rule_id))
        s.delete(rule)


def _shown(rule: CategoryRule, category: str) -> dict[str, Any]:
    def text(value: Decimal | None) -> str | None:
        return None if value is None else format(value.normalize(), "f")

    return {
        "id": rule.id,
        "category": category,
        "payee_contains": rule.payee_contains,
        "min_amount": text(rule.min_amount),
        "max_amount": text(rule.max_amount),
    }
