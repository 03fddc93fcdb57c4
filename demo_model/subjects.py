"""Match what the user called a category or merchant to the names the tools returned."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from demo_model.intent import Intent
from demo_model.vocabulary import category_in, is_topic_words, names_term, names_topic


@dataclass(frozen=True)
class Subject:
    """What a question is about, resolved: a category, a merchant, nothing matched, or all."""

    kind: str  # category, merchant, unmatched, all
    name: str = ""  # the category name, the merchant filter, or what the user said
    loose: bool = False  # a merchant filter that may match several merchants
    said: str = ""  # how the user named it, when that is not the name: "trip abroad" for Travel

    def title(self) -> str:
        """Return how answers name the subject."""
        return f"merchants matching “{self.name}”" if self.loose else self.name

    def where(self) -> dict[str, str]:
        """Return the get_transactions filter selecting this subject."""
        return {self.kind: self.name} if self.kind in ("category", "merchant") else {}


def group_keys(summary: Any) -> list[str]:
    """Return a spending summary's group names, largest first, across currencies."""
    keys: list[str] = []
    for block in currencies(summary):
        for group in block.get("groups") or []:
            if isinstance(group, dict) and group.get("key") not in keys:
                keys.append(str(group.get("key")))
    return keys


def currencies(result: Any) -> list[dict[str, Any]]:
    """Return a result's per-currency blocks (summary or comparison), empty when it has none."""
    if not isinstance(result, dict):
        return []
    return [c for c in result.get("currencies") or [] if isinstance(c, dict)]


def compared_categories(result: Any) -> list[str]:
    """Return the category names of a compare_spending result, across currencies."""
    names: list[str] = []
    for block in currencies(result):
        for row in block.get("categories") or []:
            if isinstance(row, dict) and row.get("category") not in names:
                names.append(str(row.get("category")))
    return names


def resolve(intent: Intent, categories: list[str], merchants: list[str] | None) -> Subject:
    """Return the category or merchant the intent names among the tools' names."""
    if intent.category:
        found = [c for c in categories if names_topic(c, intent.category)]
        return Subject("category", found[0]) if found else Subject("unmatched", intent.category)
    if not intent.term:
        return Subject("all")
    found = [c for c in categories if names_term(c, intent.term)]
    if found:
        return Subject("category", found[0])
    topic_words = is_topic_words(intent.term)
    if merchants is None and topic_words:  # "trip abroad"; but "whole foods" may be a shop
        return _topic(intent.term, categories)
    if merchants is None:
        # No merchant list to check against: let the tool's substring filter decide.
        return Subject("merchant", intent.term, loose=True)
    shops = [m for m in merchants if names_term(m, intent.term)]
    if not shops:
        return _topic(intent.term, categories)
    if len(shops) > 1 and all(intent.term.lower() in m.lower() for m in shops):
        return Subject("merchant", intent.term, loose=True)  # "coffee": every coffee shop
    return Subject("merchant", shops[0])


def _topic(term: str, categories: list[str]) -> Subject:
    """Return the category a phrase names by a topic word in it ("my trip abroad": Travel)."""
    topic = category_in(term)
    found = [c for c in categories if topic and names_topic(c, topic)]
    return Subject("category", found[0], said=term) if found else Subject("unmatched", term)
