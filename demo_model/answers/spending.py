"""Answers about spending: on a category, at a merchant, in total, or the largest purchases."""

from __future__ import annotations

from typing import Any

from demo_model import tool_calls as c
from demo_model.answers.fmt import (
    MAX_ROWS,
    cite,
    currency_note,
    dec,
    lines_md,
    money,
    plural,
    row_line,
)
from demo_model.answers.honest import data_note, latest_note
from demo_model.cite import Answer, Line, Part
from demo_model.intent import Intent
from demo_model.mdtext import md_text
from demo_model.periods import Period
from demo_model.planner import spending_subject
from demo_model.subjects import Subject, currencies, group_keys
from demo_model.tool_calls import Results
from tools.finance.cites import spend_source, txns_source


def spending(intent: Intent, results: Results) -> Answer:
    """Return the answer to "how much did I spend (on X) (in P)"."""
    summary = c.result_of(results, c.by_category(intent.period))
    if not currencies(summary):
        return data_note(results) or (
            f"I found no spending in {intent.period.text()}.{latest_note(results)}"
        )
    subject = spending_subject(intent, results) or Subject("all")
    if subject.kind == "unmatched":
        return unmatched(intent, subject, group_keys(summary))
    if subject.kind == "all":
        return _total(intent, summary, c.result_of(results, c.refunds(intent.period, {})))
    listed = c.result_of(results, c.rows(intent.period, subject.where()))
    back = c.result_of(results, c.refunds(intent.period, subject.where()))
    return _subject(intent, subject, summary, listed, back)


def unmatched(intent: Intent, subject: Subject, names: list[str]) -> str:
    """Say honestly that nothing matches what the user asked about, and what does exist."""
    what = (
        f"any {md_text(subject.name)} spending"
        if intent.category
        else f"any spending on a category or merchant called “{md_text(subject.name)}”"
    )
    lines = [f"I don't see {what} in {intent.period.text()}."]
    if names:
        listed = ", ".join(md_text(n) for n in names)
        lines.append(f"Categories with spending in that period: {listed}.")
    if intent.period.unit in ("day", "week", "month"):
        lines.append("For a longer view, ask about “this year” or “the last 12 months”.")
    return " ".join(lines)


def _subject(intent: Intent, subject: Subject, summary: Any, listed: Any, back: Any) -> Answer:
    is_category = subject.kind == "category"
    lines: list[Line] = [f"**{md_text(subject.title())}** in {intent.period.text()}:"]
    if subject.said:
        said, name = md_text(subject.said), md_text(subject.name)
        lines.insert(0, f"I read “{said}” as your {name} category.")
    codes: set[str] = set()
    for total in listed.get("totals") or []:
        cur = total["currency"]
        codes.add(cur)
        group, block = _group(summary, cur, subject.name) if is_category else (None, None)
        sources = _sources(intent.period, subject, group, block)
        lines.append(_subject_line(total, group, block, sources))
    refunds = (back or {}).get("transactions") or []
    if refunds:
        lines += ["", "Refunds, already taken off the net amounts above:"]
        lines += [row_line(r) for r in refunds]
        if back.get("count", 0) > len(refunds):
            lines.append(f"- and {back['count'] - len(refunds)} more")
    charges = [r for r in listed.get("transactions") or [] if dec(r.get("amount")) < 0]
    if charges:
        lines += ["", "Largest charges:"] + [row_line(r) for r in charges[:MAX_ROWS]]
    return lines_md(lines + currency_note(codes))


def _sources(period: Period, subject: Subject, group: Any, block: Any) -> dict[str, list[str]]:
    """Return the sources of a subject line's figures: net, charged, refunded, all spending."""
    where = {**period.span(), **subject.where()}
    # The net rests on every spending row of the subject, less its refunds.
    return {
        "net": [txns_source({**where, "flow": "net_spending"})],
        "out": [txns_source({**where, "flow": "spending"})],
        "in": [txns_source({**where, "flow": "refund"})],
        "all": whole(block, period) if block else [],
    }


def _subject_line(
    total: dict[str, Any], group: Any, block: Any, sources: dict[str, list[str]]
) -> Line:
    cur, count = total["currency"], int(total.get("count") or 0)
    net = group["spent"] if group else total["net"]
    refunded = dec(total.get("money_in")) > 0
    # A summary counts spending positive; a transactions total counts money out negative.
    more_back = dec(net) < 0 if group else dec(net) > 0
    if more_back:
        head = f"**{money(net, cur)} more came back than was spent**"
    elif refunded:
        head = f"**{money(net, cur)} net**"
    else:
        head = f"**{money(net, cur)}**"
    parts: list[Part] = [f"- {md_text(cur)}: ", cite(head, sources["net"])]
    if refunded:
        parts += [
            ": ",
            cite(f"{money(total['money_out'], cur)} charged", sources["out"]),
            ", minus ",
            cite(f"{money(total['money_in'], cur)} refunded", sources["in"]),
        ]
    parts.append(f", across {plural(count, 'transaction')}")
    if group and group.get("share_pct") is not None and block:
        spent = cite(f"{money(block['total_spent'], cur)} total spending", sources["all"])
        parts += [f" ({group['share_pct']}% of your ", spent, ")"]
    parts.append(".")
    return tuple(parts)


def _group(summary: Any, currency: str, name: str) -> tuple[Any, Any]:
    for block in currencies(summary):
        if block.get("currency") == currency:
            for group in block.get("groups") or []:
                if group.get("key") == name:
                    return group, block
    return None, None


def _total(intent: Intent, summary: Any, back: Any) -> Answer:
    lines: list[Line] = [f"Your spending in {intent.period.text()}:"]
    codes: set[str] = set()
    for block in currencies(summary):
        cur = block["currency"]
        codes.add(cur)
        count = int(block.get("count") or 0)
        lines.append(
            (
                f"- {md_text(cur)}: ",
                cite(f"**{money(block['total_spent'], cur)}**", whole(block, intent.period)),
                f" across {plural(count, 'transaction')}. Largest categories:",
            )
        )
        lines += group_lines(block, intent.period, MAX_ROWS + 1)
    refunds = (back or {}).get("transactions") or []
    if refunds:
        lines += ["", "Refunds, already taken off these totals:"]
        lines += [row_line(r, with_category=True) for r in refunds[: MAX_ROWS * 2]]
        count = int((back or {}).get("count") or len(refunds))
        if count > MAX_ROWS * 2:
            lines.append(f"- and {count - MAX_ROWS * 2} more")
    return lines_md(lines + currency_note(codes))


def group_lines(block: dict[str, Any], period: Period, listed: int) -> list[Line]:
    """Return a summary's largest category groups as sub-bullets, each citing its rows."""
    cur = block["currency"]
    return [
        (
            f"  - {md_text(g['key'])}: ",
            cite(money(g["spent"], cur), [spend_source(str(g["key"]), period.start, period.end)]),
            f" ({g['share_pct']}%)" if g.get("share_pct") is not None else "",
        )
        for g in (block.get("groups") or [])[:listed]
    ]


def whole(block: dict[str, Any], period: Period) -> list[str]:
    """Return the sources of every category of a summary's currency, or none if some are
    not listed (summed under 'other'): a total cites all of its rows or nothing."""
    if block.get("other") or block.get("truncated"):
        return []
    return [spend_source(str(g["key"]), period.start, period.end) for g in block["groups"]]


def largest(intent: Intent, results: Results) -> Answer:
    """Return the biggest purchases of the period, each in its own currency."""
    summary = c.result_of(results, c.by_category(intent.period))
    if not currencies(summary):
        return data_note(results) or (
            f"I found no purchases in {intent.period.text()}.{latest_note(results)}"
        )
    subject = spending_subject(intent, results) or Subject("all")
    if subject.kind == "unmatched":
        return unmatched(intent, subject, group_keys(summary))
    found = c.result_of(results, c.largest(intent.period, subject.where())) or {}
    # Spending rows only: transfers between the user's accounts are money out, not purchases.
    rows = (found.get("transactions") or [])[:MAX_ROWS]
    about = f" ({md_text(subject.title())})" if subject.kind != "all" else ""
    lines: list[Line] = [f"Your largest purchases{about} in {intent.period.text()}:"]
    lines += [row_line(r, with_category=subject.kind != "category") for r in rows]
    return lines_md(lines + currency_note({str(r.get("currency")) for r in rows}))
