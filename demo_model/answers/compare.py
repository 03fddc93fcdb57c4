"""Answers comparing two periods: one category or merchant, or all spending."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from demo_model import tool_calls as c
from demo_model.answers.fmt import MAX_ROWS, change, cite, currency_note, dec, lines_md, money
from demo_model.answers.honest import data_note, latest_note
from demo_model.cite import Answer, Line, Part
from demo_model.intent import Intent
from demo_model.mdtext import md_text
from demo_model.periods import Period
from demo_model.planner import compare_subject
from demo_model.subjects import Subject, compared_categories, currencies
from demo_model.tool_calls import Results
from tools.finance.cites import spend_source, txns_source


def compare(intent: Intent, results: Results) -> Answer:
    """Return the comparison of the asked period against its baseline."""
    period, baseline = intent.period, intent.baseline or intent.period
    found = c.result_of(results, c.compare(period, baseline))
    if not currencies(found):
        return data_note(results) or (
            f"I found no spending in {period.text()} or in {baseline.text()}.{latest_note(results)}"
        )
    said = intent.subject()
    # Never all spending in place of what the question named.
    subject = compare_subject(intent, results) or Subject(
        "unmatched" if said else "all", said or ""
    )
    head = f"{period.text()} against {baseline.text()}"
    if subject.kind == "unmatched":
        what = (
            f"any {md_text(subject.name)} spending"
            if intent.category
            else f"any spending on a category or merchant called “{md_text(subject.name)}”"
        )
        names = ", ".join(md_text(n) for n in compared_categories(found))
        return (
            f"I don't see {what} in {period.text()} or in {baseline.text()}. "
            f"Categories with spending then: {names}."
        )
    lines: list[Line]
    if subject.kind == "all":
        lines = [f"Your spending, {head}:", *_all(found, period, baseline)]
    else:
        before = c.result_of(results, c.totals(baseline, subject.where()))
        after = c.result_of(results, c.totals(period, subject.where()))
        if subject.kind == "category":
            lines = [
                f"**{md_text(subject.name)}**, {head}:",
                *_category(found, subject.name, period, baseline),
            ]
            lines += _refunds(before, baseline, subject.where())
            lines += _refunds(after, period, subject.where())
        else:
            lines = [f"**{md_text(subject.title())}**, {head}:"]
            lines += _merchant(before, after, subject.where(), period, baseline)
    lines += _partial(period, baseline)
    codes = {str(b.get("currency")) for b in currencies(found)}
    return lines_md(lines + currency_note(codes))


def _pct(row: dict[str, Any], baseline_label: str) -> str:
    if row.get("change_pct") is not None:
        return f" ({md_text(row['change_pct'])}%)"
    if dec(row.get("period_a")) <= 0:
        return f" (no percentage: nothing was spent in {baseline_label})"
    return ""


def _category(found: Any, name: str, period: Period, baseline: Period) -> list[Line]:
    lines: list[Line] = []
    for block in currencies(found):
        cur = block["currency"]
        for row in block.get("categories") or []:
            if row.get("category") == name:
                lines.append(
                    (
                        f"- {md_text(cur)}: ",
                        _spent(row["period_b"], cur, [name], period, bold=True),
                        " against ",
                        _spent(row["period_a"], cur, [name], baseline),
                        f", {change(row['change'], cur)}{_pct(row, 'the earlier period')}.",
                    )
                )
    return lines or [f"- No {md_text(name)} spending in either period."]


def _spent(amount: str, cur: str, names: list[str], when: Period, bold: bool = False) -> Part:
    """Return one period's amount citing the rows of the categories it sums (none if 0)."""
    text = f"**{money(amount, cur)}**" if bold else money(amount, cur)
    if dec(amount) == 0 or not names:
        return text
    return cite(text, [spend_source(n, when.start, when.end) for n in names])


def _merchant(
    before: Any, after: Any, where: dict[str, str], period: Period, baseline: Period
) -> list[Line]:
    """Return a merchant's net spending per currency in both periods, and the change."""
    totals: dict[str, dict[str, dict[str, Any]]] = {}
    for key, result in (("a", before), ("b", after)):
        for total in (result or {}).get("totals") or []:
            totals.setdefault(total["currency"], {})[key] = total
    if not totals:
        return ["- No transactions at such a merchant in either period."]
    lines: list[Line] = []
    for cur, both in sorted(totals.items()):
        a, b = both.get("a"), both.get("b")
        spent_a, spent_b = -dec((a or {}).get("net")), -dec((b or {}).get("net"))
        lines.append(
            (
                f"- {md_text(cur)}: ",
                *_net(b, cur, where, period, bold=True),
                " against ",
                *_net(a, cur, where, baseline),
                f", {_moved(spent_a, spent_b)}.",
            )
        )
    return lines


def _moved(before: Decimal, after: Decimal) -> str:
    """Return how spending moved, in percent: no tool states the difference as an amount."""
    if after == before:
        return "no change"
    word = "up" if after > before else "down"
    if before <= 0:
        return f"{word} (no percentage: nothing was spent in the earlier period)"
    return f"{word} {abs(after - before) / before * 100:.1f}%"


def _net(
    total: dict[str, Any] | None, cur: str, where: dict[str, str], when: Period, bold: bool = False
) -> list[Part]:
    """Return a merchant's net spending in a period, with what was charged and refunded."""
    if total is None or int(total.get("count") or 0) == 0:
        text = money("0.00", cur)
        return [f"**{text}**" if bold else text]
    rows = {**when.span(), **where}
    net = dec(total["net"])
    spent = txns_source({**rows, "flow": "net_spending"})
    if net > 0:
        said = f"{money(total['net'], cur)} more came back than was spent"
    else:
        said = money(total["net"], cur) + (" net" if dec(total.get("money_in")) > 0 else "")
    parts: list[Part] = [cite(f"**{said}**" if bold else said, [spent])]
    if dec(total.get("money_in")) > 0:
        parts += [
            " (",
            cite(
                f"{money(total['money_out'], cur)} charged",
                [txns_source({**rows, "flow": "spending"})],
            ),
            ", minus ",
            cite(
                f"{money(total['money_in'], cur)} refunded",
                [txns_source({**rows, "flow": "refund"})],
            ),
            ")",
        ]
    return parts


def _refunds(result: Any, period: Period, where: dict[str, str]) -> list[Line]:
    rows = txns_source({**period.span(), **where, "flow": "refund"})
    return [
        (
            f"- Refunds already taken off in {md_text(period.label)}: ",
            cite(money(t["money_in"], t["currency"]), [rows]),
            ".",
        )
        for t in (result or {}).get("totals") or []
        if dec(t.get("money_in")) > 0
    ]


def _all(found: Any, period: Period, baseline: Period) -> list[Line]:
    lines: list[Line] = []
    for block in currencies(found):
        cur = block["currency"]
        moves = block.get("categories") or []
        # A total cites every category's rows, or nothing when some are not listed.
        names = [] if found.get("truncated") else [m["category"] for m in moves]
        lines.append(
            (
                f"- {md_text(cur)} in total: ",
                _spent(block["period_b"], cur, _nonzero(moves, "period_b", names), period, True),
                " against ",
                _spent(block["period_a"], cur, _nonzero(moves, "period_a", names), baseline),
                f", {change(block['change'], cur)}{_pct(block, 'the earlier period')}. "
                "Biggest moves:",
            )
        )
        lines += [
            (
                f"  - {md_text(m['category'])}: ",
                _spent(m["period_b"], cur, [m["category"]], period),
                " against ",
                _spent(m["period_a"], cur, [m["category"]], baseline),
                f", {change(m['change'], cur)}",
            )
            for m in moves[:MAX_ROWS]
        ]
    return lines


def _nonzero(moves: list[dict[str, Any]], key: str, names: list[str]) -> list[str]:
    """Return the categories among `names` with spending in the period `key`."""
    return [m["category"] for m in moves if m["category"] in names and dec(m[key]) != 0]


def _partial(period: Period, baseline: Period) -> list[str]:
    days = (period.end - period.start).days + 1
    base_days = (baseline.end - baseline.start).days + 1
    if days == base_days:
        return []
    return [
        "",
        f"Note: the two periods differ in length ({days} days against {base_days}), "
        f"so compare them with that in mind.",
    ]
