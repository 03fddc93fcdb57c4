"""The answer to "categorise my imported transactions": what was proposed, and what changed."""

from __future__ import annotations

from collections import Counter
from typing import Any

from demo_model import tool_calls as c
from demo_model.answers.fmt import lines_md, plural, row_line
from demo_model.categorize_rows import open_rows, proposals, uncategorized, write
from demo_model.cite import Answer, Line
from demo_model.intent import Intent
from demo_model.mdtext import md_text
from demo_model.tool_calls import Results

LISTED = 5  # rows left alone that the answer names


def categorize_rows(intent: Intent, results: Results) -> Answer:
    """Return what the approved change did, or why there was nothing to propose."""
    imported = "imported" in dict(intent.details)
    rows = open_rows(imported, results)
    if not rows:
        which = "imported transactions" if imported else "transactions"
        return f"None of your {which} is uncategorized, so there is nothing to sort."
    found = proposals(intent.period.end, imported, results)
    proposed = {int(p.row["id"]) for p in found}
    left = [r for r in rows if int(r["id"]) not in proposed]
    if not found:
        return lines_md(
            [
                f"I found {plural(len(rows), 'uncategorized transaction')}, but I could not "
                "propose a category for any of them: no earlier transaction at the same "
                "merchant has one, and no merchant name matches one of your categories. "
                "I changed nothing. The first of them:",
                *_rows(left),
            ]
        )
    result = c.result_of(results, write(found))
    if not isinstance(result, dict):
        return "I could not categorize them: the categorize_transactions tool did not run."
    per = result.get("by_category") or {}
    counted = ", ".join(f"{md_text(n)} to **{md_text(k)}**" for k, n in per.items())
    reasons = Counter(p.reason for p in found)
    why = (
        f"{reasons['history']} from the category you already give the same merchant, "
        f"{reasons['keyword']} from a word in the merchant's name"
    )
    lines: list[Line] = [
        f"Done: I categorized {plural(int(result.get('changed') or 0), 'transaction')}"
        + (f": {counted}." if counted else ".")
        + f" ({why}.)"
    ]
    more = _remaining(imported, results) - len(rows)
    if more > 0:
        lines.append(
            f"{plural(more, 'older uncategorized transaction')} did not fit in one change; "
            "ask me again to sort them next."
        )
    if left:
        lines += [
            f"I left {plural(len(left), 'transaction')} uncategorized: nothing in your history "
            "or the merchant's name pointed to a category. The first of them:",
            *_rows(left),
        ]
    return lines_md(lines)


def _remaining(imported: bool, results: Results) -> int:
    """How many rows had no category when they were looked up (all pages)."""
    found = c.result_of(results, uncategorized(imported)) or {}
    return int(found.get("count") or 0)


def _rows(rows: list[dict[str, Any]]) -> list[Line]:
    return [row_line(r) for r in rows[:LISTED]]
