"""Read a change the user asks for: "set my groceries budget to 700", "move transaction 12 to X"."""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal

from demo_model.categorize_request import KIND as CATEGORIZE_ROWS
from demo_model.categorize_request import categorize_request
from demo_model.periods import MONTHS
from demo_model.vocabulary import fold

SET_BUDGET = re.compile(
    r"\b(?:raise|set|change|increase|lower|reduce|update|make|put)\s+(?:my\s+|the\s+)?"
    r"(?P<what>[a-z&. -]+?)\s+budget\s+(?:to|at)\s+(?P<sym>[$€£])?\s?"
    r"(?P<amount>\d[\d,]*(?:\.\d{1,2})?)\s*(?P<cur>usd|eur|gbp|dollars?|euros?|pounds?)?\b"
)
MOVE = re.compile(
    r"\b(?:re)?(?:categori[sz]e|move|put|file|mark)\s+(?:transaction\s+)?(?:#|number\s+)?"
    r"(?P<id>\d+)\s+(?:to|as|in|into|under)\s+(?:the\s+|my\s+)?(?P<what>[a-z&. -]+?)"
    r"(?:\s+category)?\s*[.!?]*$"
)
NAMED = re.compile(
    r"\bthe\s+(?P<merchant>[a-z0-9&. -]+?)\s+(?:payment|charge|transaction|purchase)\s+"
    r"(?:on|from)\s+(?P<date>\d{4}-\d{2}-\d{2}|[a-z]+\s+\d{1,2}(?:st|nd|rd|th)?|"
    r"\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?[a-z]+)\s+(?:is|was|should be)\s+(?:a\s+|an\s+|in\s+)?"
    r"(?P<what>[a-z&. -]+?)(?:\s+category)?\s*[.!?]*$"
)
DAY = (
    r"(?P<date>\d{4}-\d{2}-\d{2}|[a-z]+\s+\d{1,2}(?:st|nd|rd|th)?|"
    r"\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?[a-z]+)"
)
# "categorize the Amazon purchase on 2026-11-11 as Travel": a write named by merchant and day.
MOVE_NAMED = re.compile(
    r"\b(?:re)?(?:categori[sz]e|move|put|file|mark)\s+(?:the|my)\s+(?P<merchant>[a-z0-9&. -]+?)\s+"
    r"(?:payment|charge|transaction|purchase|order)\s+(?:on|from)\s+" + DAY + r"\s+"
    r"(?:to|as|in|into|under)\s+(?:the\s+|my\s+)?(?P<what>[a-z&. -]+?)(?:\s+category)?\s*[.!?]*$"
)
CODES = {"$": "USD", "€": "EUR", "£": "GBP", "dollar": "USD", "euro": "EUR", "pound": "GBP"}
CHANGE_KINDS = ("set_budget", "categorize", CATEGORIZE_ROWS)


def read_change(question: str, today: date) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """Return ("set_budget" or "categorize", its details) when the question asks for a change."""
    q = fold(question).strip()
    if m := SET_BUDGET.search(q):
        code = (m["cur"] or "").rstrip("s")
        currency = CODES.get(m["sym"] or "") or CODES.get(code) or code.upper()
        amount = f"{Decimal(m['amount'].replace(',', '')):.2f}"
        return "set_budget", (("category", m["what"]), ("amount", amount), ("currency", currency))
    if m := MOVE.search(q):
        return "categorize", (("id", m["id"]), ("category", m["what"]))
    named = NAMED.search(q) or MOVE_NAMED.search(q)
    if (m := named) and (day := _day(m["date"], today)):
        details = (("merchant", m["merchant"]), ("date", day.isoformat()), ("category", m["what"]))
        return "categorize", details
    if (bulk := categorize_request(question)) is not None:
        return CATEGORIZE_ROWS, bulk
    return None


def _day(text: str, today: date) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        pass
    words = re.findall(r"[a-z]+|\d+", text)
    number = next((int(w) for w in words if w.isdigit()), 0)
    month = next((MONTHS[w] for w in words if w in MONTHS), 0)
    if not (month and 1 <= number <= 31):
        return None
    try:
        found = date(today.year, month, number)
        return found if found <= today else date(today.year - 1, month, number)
    except ValueError:
        return None
