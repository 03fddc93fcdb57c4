"""How the demo model writes amounts, counts and changes: every amount keeps its currency."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from typing import Any

from demo_model.cite import Cite, Line, Part, parts_of, text_of
from demo_model.mdtext import md_text
from tools.finance.cites import txn_source

MAX_ROWS = 5
CURRENCY_NOTE = (
    "Amounts stay in their own currency: I never convert between currencies or add them together."
)


def dec(value: Any) -> Decimal:
    """Return a tool's decimal string as a Decimal (0 when absent)."""
    try:
        return Decimal(str(value)) if value is not None else Decimal(0)
    except InvalidOperation:
        return Decimal(0)


def amount(value: Any) -> str:
    """Return a tool amount unsigned, with thousands separators: "-1162.00" -> "1,162.00"."""
    text = str(value).lstrip("+-")
    whole, dot, cents = text.partition(".")
    return f"{int(whole):,}{dot}{cents}" if whole.isdigit() else text


def money(value: Any, currency: str) -> str:
    """Return an amount with its currency code, e.g. "1,162.00 EUR" (as Markdown text)."""
    return md_text(f"{amount(value)} {currency}")


def signed(value: Any, currency: str) -> str:
    """Return an amount with its sign and currency: "-58.40 EUR" (a balance owed shows it)."""
    sign = "-" if dec(value) < 0 else ""
    return md_text(f"{sign}{amount(value)} {currency}")


def plural(count: int, word: str) -> str:
    """Return "1 transaction" or "3 transactions" ("2 categories")."""
    if count == 1:
        return f"{count} {word}"
    return f"{count} {word[:-1]}ies" if word.endswith("y") else f"{count} {word}s"


def change(value: Any, currency: str) -> str:
    """Return a signed change in words: "up 12.00 USD", "down 3.50 EUR" or "no change"."""
    d = dec(value)
    if d == 0:
        return "no change"
    return f"{'up' if d > 0 else 'down'} {money(value, currency)}"


def row_line(row: dict[str, Any], with_category: bool = False, refund: bool = True) -> Line:
    """Return one transaction as a bullet: date, merchant, amount and currency (cited)."""
    extra = f", {md_text(row['category'])}" if with_category and row.get("category") else ""
    pending = " (pending)" if row.get("pending") else ""
    back = " back" if refund and dec(row.get("amount")) > 0 else ""
    said = (
        f"{md_text(row.get('date'))}: {md_text(row.get('merchant'))}, "
        f"{money(row.get('amount'), str(row.get('currency')))}{back}"
    )
    return ("- ", cite(said, [txn_source(row["id"])] if "id" in row else []), extra + pending)


def cite(text: str, refs: Iterable[str]) -> Part:
    """Return `text` citing the search results `refs` (plain text when there are none)."""
    refs = tuple(refs)
    return Cite(text, refs) if refs else text


def currency_note(codes: set[str]) -> list[Line]:
    """Return the note on currencies when an answer has more than one."""
    return ["", CURRENCY_NOTE] if len(codes) > 1 else []


def lines_md(lines: Iterable[Line]) -> list[Part]:
    """Join answer lines as Markdown: a sentence after a list starts its own paragraph.

    Without the blank line, CommonMark reads the sentence as part of the list's last item.
    """
    out: list[Part] = []
    last = None
    for line in lines:
        text = text_of(line)
        if last is not None:
            after_list = last.startswith("- ") and text and not text.startswith(("- ", "  "))
            out.append("\n\n" if after_list else "\n")
        out += parts_of(line)
        last = text
    return out
