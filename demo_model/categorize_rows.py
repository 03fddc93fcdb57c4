"""Propose categories for the user's uncategorized rows, then ask to apply them as one change.

The rule is small and says where each proposal comes from: the category the user already
gives the same merchant (their history decides), else a merchant keyword that names one of
the user's own categories. A row neither rule reaches is left alone, never guessed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date
from typing import Any

from demo_model import tool_calls as c
from demo_model.change_plans import the_year
from demo_model.subjects import group_keys
from demo_model.tool_calls import Call, Results
from demo_model.vocabulary import category_in, contains_phrase, fold, names_topic, tokens
from tools.finance.inputs import MAX_CATEGORIZE
from tools.finance.queries import UNCATEGORIZED

MERCHANTS = 10  # distinct merchants whose history is looked up, most rows first
HISTORY = 50  # rows of one merchant's history read
# Merchant words that name a topic of vocabulary.CATEGORY_SYNONYMS (brands the synonyms lack).
MERCHANT_TOPICS: dict[str, tuple[str, ...]] = {
    "groceries": ("market", "aldi", "lidl", "tesco", "safeway", "kroger", "rewe", "carrefour"),
    "restaurants": ("pizza", "burger", "coffee", "bistro", "sushi", "starbucks", "mcdonald"),
    "transport": ("uber", "lyft", "shell", "esso", "metro", "rail", "train", "bus"),
    "subscriptions": ("netflix", "spotify", "disney", "hulu", "youtube"),
    "utilities": ("telecom", "vodafone", "verizon", "comcast", "power", "gas"),
    "travel": ("airbnb", "airways", "ryanair", "easyjet", "lufthansa", "expedia"),
    "health": ("cvs", "walgreens", "apotheke", "clinic"),
    "shopping": ("amazon", "ikea", "zara", "h&m"),
}
INCOME_WORDS = ("payroll", "salary", "wage")
INCOME_NAMES = ("salary", "income", "wage", "payroll")


@dataclass(frozen=True)
class Proposal:
    """One uncategorized row, the category proposed for it, and why."""

    row: dict[str, Any]
    category: str
    reason: str  # "history" or "keyword"


def uncategorized(imported: bool = False) -> Call:
    """The user's rows without a category (imported ones only), newest first, one change's worth."""
    where: dict[str, Any] = {"category": UNCATEGORIZED, "limit": MAX_CATEGORIZE}
    return "get_transactions", {**where, "imported": True} if imported else where


def history(merchant: str) -> Call:
    """The user's rows at a merchant: the categories they already give it."""
    return "get_transactions", {"merchant": merchant[:80], "limit": HISTORY}


def plan_categorize(today: date, imported: bool, results: Results) -> list[Call]:
    """Return the next calls: the rows and names, each merchant's history, then the write."""
    if todo := c.missing(results, [uncategorized(imported), c.by_category(the_year(today))]):
        return todo
    rows = open_rows(imported, results)
    if todo := c.missing(results, [history(m) for m in merchants(rows)]):
        return todo
    found = proposals(today, imported, results)
    if not found:
        return []
    return c.missing(results, [write(found)])


def write(found: list[Proposal]) -> Call:
    """The one categorize_transactions call that applies every proposal (after approval)."""
    changes = [{"transaction_id": int(p.row["id"]), "category": p.category} for p in found]
    return "categorize_transactions", {"changes": changes}


def open_rows(imported: bool, results: Results) -> list[dict[str, Any]]:
    """Return the uncategorized rows the lookup found."""
    found = c.result_of(results, uncategorized(imported)) or {}
    return [r for r in found.get("transactions") or [] if isinstance(r, dict) and "id" in r]


def merchants(rows: list[dict[str, Any]]) -> list[str]:
    """The merchants with the most uncategorized rows, whose history is looked up."""
    counts = Counter(str(r.get("merchant") or "") for r in rows)
    named = [m for m, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if m.strip()]
    return named[:MERCHANTS]


def proposals(today: date, imported: bool, results: Results) -> list[Proposal]:
    """Return a proposal for every uncategorized row one of the two rules reaches."""
    rows = open_rows(imported, results)
    known = _known_names(today, results, rows)
    out: list[Proposal] = []
    for row in rows:
        merchant = str(row.get("merchant") or "")
        found = c.result_of(results, history(merchant)) if merchant.strip() else None
        if past := _from_history(merchant, found):
            out.append(Proposal(row, past, "history"))
        elif named := _from_keywords(merchant, row, known):
            out.append(Proposal(row, named, "keyword"))
    return out


def _known_names(today: date, results: Results, rows: list[dict[str, Any]]) -> list[str]:
    """The user's category names the lookups showed: spending categories, then any row's."""
    names = group_keys(c.result_of(results, c.by_category(the_year(today))))
    for merchant in merchants(rows):
        found = c.result_of(results, history(merchant)) or {}
        names += [str(r["category"]) for r in found.get("transactions") or [] if r.get("category")]
    return [n for n in dict.fromkeys(names) if n.lower() != UNCATEGORIZED.lower()]


def _from_history(merchant: str, found: Any) -> str | None:
    """The category the user gives this very merchant most often, if any."""
    if not isinstance(found, dict):
        return None
    same = [
        str(r["category"])
        for r in found.get("transactions") or []
        if r.get("category") and fold(str(r.get("merchant") or "")) == fold(merchant)
    ]
    if not same:
        return None
    counts = Counter(same)
    return sorted(counts, key=lambda name: (-counts[name], name))[0]


def _from_keywords(merchant: str, row: dict[str, Any], known: list[str]) -> str | None:
    """One of the user's categories a word of the merchant names, money in or out alike."""
    words = tokens(merchant)
    money_in = not str(row.get("amount") or "").startswith("-")
    if money_in:
        if any(w in words for w in INCOME_WORDS):
            return next((n for n in known if any(x in tokens(n) for x in INCOME_NAMES)), None)
        return None
    topic = next(
        (
            t
            for t, brands in MERCHANT_TOPICS.items()
            if any(contains_phrase(words, b) for b in brands)
        ),
        None,
    ) or category_in(merchant)
    if topic is None:
        return None
    return next((n for n in known if names_topic(n, topic)), None)
