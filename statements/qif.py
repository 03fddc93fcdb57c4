"""Quicken QIF files: the bank, cash, card and asset sections of each account, read line by
line, twice (no list of rows). Investment and memorized sections are named as not imported;
category, class and security lists are no movements. QIF has no account numbers."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from statements.amounts import POINT, NumberStyle
from statements.dates import DateStyle, guess_order
from statements.parsed import (
    End,
    ParsedFile,
    ParsedRow,
    ParsedStatement,
    RowSink,
    checked,
    counted,
    read_twice,
)

# The sections whose records are movements of an account, and the kind of that account.
MOVEMENTS = {
    "bank": "checking", "cash": "checking", "ccard": "credit_card", "otha": "savings",
    "othl": "checking",
}  # fmt: skip
NOT_IMPORTED = {"invst": "investment transaction", "memorized": "memorized transaction"}
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_DATES = re.compile(r"^D([^\r\n]{1,40})", re.MULTILINE)
_AMOUNTS = re.compile(r"^[TU]([^\r\n]{1,40})", re.MULTILINE)
SAMPLES = 2000
# Resume point of a statement's second scan: (offset, line).
Resume = tuple[int, int]


@dataclass
class _Section:
    """Where the reader is: the section's kind, and the account it belongs to."""

    kind: str = ""
    account: str | None = None
    account_type: str | None = None
    listing: bool = False  # between !Option:AutoSwitch and !Clear:AutoSwitch
    skipped: dict[str, int] = field(default_factory=dict)


def read_qif(
    text: str, *, currency: str | None, day_first: bool | None = None, sink: RowSink | None = None
) -> ParsedFile:
    """Read every account's movements of a QIF file, in the order the file lists them (with a
    `sink`, in one pass, each row handed to it)."""
    order = guess_order(_DATES.findall(text, 0, 1 << 20)[:SAMPLES])
    if order is None:
        order = "dmy" if day_first else "mdy"
    dates = DateStyle(order)
    numbers = NumberStyle.guess(_AMOUNTS.findall(text, 0, 1 << 20)[:SAMPLES]) or POINT
    skipped: dict[str, int] = {}

    def scan(resume: Resume) -> Iterator[ParsedRow | End]:
        return _scan(text, resume, dates, numbers, currency, skipped if resume[0] < 0 else {})

    statements = read_twice(scan, (-1, 1), sink)  # -1: the whole file, from its start
    not_imported = [counted(count, NOT_IMPORTED[kind]) for kind, count in skipped.items()]
    checked(statements, "bank, cash or card transactions", not_imported)
    return ParsedFile("qif", statements, not_imported=not_imported)


def _scan(
    text: str,
    resume: Resume,
    dates: DateStyle,
    numbers: NumberStyle,
    currency: str | None,
    skipped: dict[str, int],
) -> Iterator[ParsedRow | End]:
    offset, line = resume
    whole = offset < 0
    offset = max(offset, 0)
    section = _Section()
    statement: ParsedStatement | None = None
    started: Resume = resume
    record: dict[str, str] = {}
    record_line = line
    for found in _LINES.finditer(text, offset):
        raw = found.group().rstrip("\r\n")
        value = raw.strip()
        if value.startswith("!"):
            if record:
                row = _record(record, record_line, section, dates, numbers, currency, skipped)
                if row is not None:
                    yield row
                record = {}
            header = value[1:].replace(" ", "").casefold()
            ends = _header(section, header, statement)
            if ends and statement is not None:
                yield End(statement, started)
                statement = None
                if not whole:
                    return
            if section.kind in MOVEMENTS and statement is None:
                statement = ParsedStatement(
                    kind=_kind(section), currency=currency, name=section.account
                )
                started = (found.start(), line)
        elif value == "^":
            if section.kind == "account" and not section.listing:
                section.account = record.get("N", "")[:80] or None
                section.account_type = record.get("T", "").replace(" ", "").casefold() or None
            else:
                row = _record(record, record_line, section, dates, numbers, currency, skipped)
                if row is not None:
                    yield row
            record = {}
        elif value:
            if not record:
                record_line = line
            record.setdefault(value[0], value[1:].strip())
        line += 1
    if record:
        row = _record(record, record_line, section, dates, numbers, currency, skipped)
        if row is not None:
            yield row
    if statement is not None:
        yield End(statement, started)


def _header(section: _Section, header: str, statement: ParsedStatement | None) -> bool:
    """Follow a `!` line; True when it ends the statement being read."""
    if header.startswith("option:autoswitch"):
        section.listing = True
        return False
    if header.startswith("clear:autoswitch"):
        section.listing = False
        return False
    if header == "account":
        section.kind = "account"
        return statement is not None and not section.listing
    if header.startswith("type:"):
        kind = header[5:]
        ends = statement is not None and (kind not in MOVEMENTS or _kind_of(kind) != statement.kind)
        section.kind = kind
        return ends
    return False


def _kind_of(kind: str) -> str:
    return MOVEMENTS.get(kind, "checking")


def _kind(section: _Section) -> str:
    return _kind_of(section.kind)


def _record(
    record: dict[str, str],
    line: int,
    section: _Section,
    dates: DateStyle,
    numbers: NumberStyle,
    currency: str | None,
    skipped: dict[str, int],
) -> ParsedRow | None:
    """The movement a record of a movements section holds; None for anything else."""
    if not record:
        return None
    if section.kind in NOT_IMPORTED:
        skipped[section.kind] = skipped.get(section.kind, 0) + 1
        return None
    if section.kind not in MOVEMENTS or not ({"D", "T", "U"} & record.keys()):
        return None
    payee, memo = record.get("P", ""), record.get("M", "")
    row = ParsedRow(
        line, None, None, merchant=(payee or memo)[:120], description=memo[:255], currency=currency
    )
    where = f"the record of line {line}"
    try:
        row.posted_on = dates.parse(record.get("D", "").replace("'", "/"))
    except ValueError as err:
        row.reason = f"{where}: D {err}" if record.get("D") else f"{where} has no date (D)"
        return row
    amount = record.get("T") or record.get("U") or ""
    try:
        row.amount_minor = numbers.minor(amount, currency)
    except ValueError as err:
        row.reason = f"{where}: T {err}" if amount else f"{where} has no amount (T)"
    return row
