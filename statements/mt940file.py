"""SWIFT MT940 and MT942 statements: every statement of a file on its own (:20: or :25: to
:62F:), its :61: entries with their :86: details, read line by line, twice (no list of rows).

An entry's references (NONREF, EREF+..., an account number) are no bank ids: rows of a file are
told apart by occurrence. A row takes its booking date (the entry date) where there is one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date

from statements.amounts import COMMA, POINT, quoted
from statements.details import Details, read_details
from statements.parsed import (
    End,
    ParsedFile,
    ParsedRow,
    ParsedStatement,
    RowSink,
    checked,
    last_digits,
    read_twice,
)

TAGS = frozenset(
    ("20", "21", "25", "28", "28C", "60F", "60M", "61", "86", "62F", "62M", "64", "65", "13",
     "13D", "34F", "90D", "90C", "NS")
)  # fmt: skip
_TAG = re.compile(r":(\d{2}[A-Z]?|NS):")
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_CONTROL = "\x00\x01\x02\x03\x04\x1a \t"
_BALANCE = re.compile(r"([CD])(\d{6})([A-Z]{3})?(\d.*)")
_ENTRY = re.compile(
    r"(?P<value>\d{6})(?P<entry>\d{4})?(?P<mark>RC|RD|C|D)(?P<funds>[A-Z])?"
    r"(?P<amount>\d[\d,.]*)(?P<rest>.*)"
)
_BIC = re.compile(r"[A-Z]{6}[A-Z0-9]{2}(?:[A-Z0-9]{3})?")
_SENDER = re.compile(r"\{2:O94[02]\d{10}([A-Z]{6}[A-Z0-9]{2})")
# Resume point of a statement's second scan: (offset, line, number of its first row).
Resume = tuple[int, int, int]


@dataclass(slots=True)
class _Field:
    """A tag and its lines (the first one after the tag, then its continuation lines)."""

    tag: str
    lines: list[str]
    line: int
    offset: int


@dataclass
class _Statement:
    """A statement being read."""

    resume: Resume
    parsed: ParsedStatement = field(default_factory=ParsedStatement)
    has_closing: bool = False
    has_content: bool = False


def read_mt940(text: str, currency: str | None = None, sink: RowSink | None = None) -> ParsedFile:
    """Read every statement of an MT940/MT942 file; `no_transactions` when it lists no entry.
    With a `sink`, every row is read whole in the one pass and handed to it (no stream)."""
    sender = _SENDER.search(text[:4096])
    not_imported: list[str] = []

    def scan(resume: Resume) -> Iterator[ParsedRow | End]:
        first = resume[0] < 0
        return _statements(text, resume, currency, not_imported if first else [], sink is not None)

    statements = read_twice(scan, (-1, 1, 1), sink)  # -1: the whole file, from its start
    for statement in statements:
        statement.bank_name = statement.bank_name or (sender.group(1) if sender else None)
    checked(statements, "statement", not_imported)
    return ParsedFile("mt940", statements, not_imported=not_imported)


def _fields(text: str, offset: int, line: int) -> Iterator[_Field | None]:
    """The file's fields from `offset`; None for a line `-` (the end of a statement)."""
    current: _Field | None = None
    split_tag = False
    for found in _LINES.finditer(text, offset):
        raw = found.group().rstrip("\r\n")
        stripped = raw.strip(_CONTROL)
        if "{4:" in stripped:  # a SWIFT envelope: the statement starts after it
            stripped = stripped[stripped.index("{4:") + 3 :].strip(_CONTROL)
        if split_tag:  # a tag cut in two lines: ":" then "86:..."
            stripped, split_tag = ":" + stripped, False
        tag = _TAG.match(stripped)
        if tag is not None and tag.group(1) in TAGS:
            if current is not None:
                yield current
            current = _Field(tag.group(1), [stripped[tag.end() :]], line, found.start())
        elif stripped in ("-", "-}") or stripped.startswith("-}{5:"):
            if current is not None:
                yield current
            current = None
            yield None
        elif stripped == ":":
            split_tag = True
        elif current is not None and stripped:
            current.lines.append(raw.strip("\x00\x01\x02\x03\x1a"))
        line += 1
    if current is not None:
        yield current


def _statements(
    text: str, resume: Resume, currency: str | None, not_imported: list[str], full: bool = False
) -> Iterator[ParsedRow | End]:
    offset, line, number = resume
    whole = offset < 0
    dated_only = whole and not full  # the first pass counts and dates the rows, nothing more
    offset = max(offset, 0)
    statement: _Statement | None = None
    row: ParsedRow | None = None
    details: list[str] = []
    for item in _fields(text, offset, line):
        tag = item.tag if item is not None else "-"
        if row is not None and tag not in ("86", "NS"):
            if not dated_only:
                _describe(row, details)
            yield row
            row, details = None, []
        if statement is not None and _starts_another(statement, tag):
            yield End(_finished(statement, currency), statement.resume)
            statement = None
            if not whole:
                return
        if item is None:
            continue
        if statement is None:
            statement = _Statement((item.offset, item.line, number))
        statement.has_content = True
        if tag == "25":
            _account(statement.parsed, item.lines[0].strip())
        elif tag in ("60F", "60M", "62F", "62M"):
            _balance(statement, item, not_imported)
        elif tag in ("34F", "90D", "90C") and statement.parsed.currency is None:
            code = re.search(r"[A-Z]{3}", item.lines[0])
            statement.parsed.currency = code.group() if code else None
        elif tag == "61":
            row_currency = statement.parsed.currency or currency
            row, details = _entry(item, number, row_currency, dated_only), []
            number += 1
        elif tag in ("86", "NS") and row is not None:
            details.append("".join(item.lines))
    if row is not None:
        if not dated_only:
            _describe(row, details)
        yield row
    if statement is not None and statement.has_content:
        yield End(_finished(statement, currency), statement.resume)


def _starts_another(statement: _Statement, tag: str) -> bool:
    """Whether `tag` ends the statement being read: `-`, a new :20:, or an account or
    opening balance after its closing balance."""
    if tag == "-":
        return True
    if tag == "20":
        return statement.has_content
    return tag in ("25", "60F", "60M") and statement.has_closing


def _account(statement: ParsedStatement, value: str) -> None:
    if statement.bank_ref is not None or not value:
        return  # a second :25: inside one statement is a broken file's; the first one counts
    statement.bank_ref = value[:64]
    number = value.rsplit("/", 1)[-1]
    suffix = re.search(r"[A-Z]{3}$", number)
    if suffix is not None and statement.currency is None:
        statement.currency = suffix.group()
    statement.last_digits = last_digits(number)
    bank = value.split("/", 1)[0] if "/" in value else ""
    if _BIC.fullmatch(bank):
        statement.bank_name = bank


def _balance(statement: _Statement, item: _Field, not_imported: list[str]) -> None:
    parsed = statement.parsed
    value = item.lines[0].strip()
    found = _BALANCE.fullmatch(value)
    try:
        if found is None:
            raise ValueError(f"{quoted(value)} is not a balance")
        mark, _day, code, amount = found.groups()
        minor = _amount(amount.strip(), code or parsed.currency)
    except ValueError as err:
        not_imported.append(f"the balance :{item.tag}: of line {item.line}: {err}")
        return
    parsed.currency = parsed.currency or code
    signed = -minor if mark == "D" else minor
    if item.tag.startswith("60") and parsed.opening_minor is None:
        parsed.opening_minor = signed
    elif item.tag.startswith("62"):
        parsed.closing_minor, statement.has_closing = signed, True


def _amount(text: str, currency: str | None) -> int:
    """An amount in minor units: SWIFT's decimal comma, or the point some banks write
    instead (`300.00`, `115351.`), never read as a grouping mark."""
    if "," not in text and text.count(".") == 1:
        return POINT.minor(text.removesuffix("."), currency)
    return COMMA.minor(text, currency)


def _entry(item: _Field, number: int, currency: str | None, dated_only: bool) -> ParsedRow:
    """A :61: line (cut in two lines by some banks), and its supplementary details."""
    lines = item.lines
    found = _ENTRY.match(lines[0].strip())
    extra = lines[1:]
    if (found is None or not found.group("rest")) and len(lines) > 1:
        joined = _ENTRY.match(lines[0].strip() + lines[1].strip())
        if joined is not None:
            found, extra = joined, lines[2:]
    row = ParsedRow(number, None, None, currency=currency)
    where = f":61: of line {item.line}"
    if found is None:
        row.reason = f"{where}: {quoted(lines[0].strip())} is not an entry"
        return row
    row.description = " ".join(part.strip() for part in extra)[:255]
    try:
        row.posted_on = _day(found.group("value"), found.group("entry"))
        if dated_only:
            return row
        minor = _amount(found.group("amount"), currency)
    except ValueError as err:
        row.reason = f"{where}: {err}"
        return row
    debit = found.group("mark") in ("D", "RC")
    row.amount_minor = -minor if debit else minor
    return row


def _day(value: str, entry: str | None) -> date:
    """The entry (booking) date, its year from the value date; the value date when there is
    no entry date or it is no date (banks write 30 February as a value date)."""
    year, month = 2000 + int(value[:2]), int(value[2:4])
    if year >= 2070:
        year -= 100
    if entry is not None:
        entry_month = int(entry[:2])
        entry_year = year + (1 if month == 12 and entry_month == 1 else 0)
        entry_year -= 1 if month == 1 and entry_month == 12 else 0
        try:
            return date(entry_year, entry_month, int(entry[2:]))
        except ValueError:
            pass
    try:
        return date(year, month, int(value[4:]))
    except ValueError as err:
        raise ValueError(f"{quoted(value)} is not a date ({err})") from err


def _describe(row: ParsedRow, details: list[str]) -> None:
    """The row's payee and purpose from its :86: details (structured or free text)."""
    read: Details = read_details(" ".join(d for d in details if d.strip()))
    purpose = read.purpose or row.description
    row.merchant = (read.name or read.posting_text or purpose)[:120]
    row.description = purpose[:255]


def _finished(statement: _Statement, currency: str | None) -> ParsedStatement:
    parsed = statement.parsed
    parsed.currency = parsed.currency or currency
    return parsed
