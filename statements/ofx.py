"""OFX and QFX statements, 1.x (SGML) and 2.x (XML): every bank and card statement of a file,
read from one flat stream of tags (statements/sgml.py), twice (no tree, no list of rows).

Lenient where banks are: unknown elements are skipped, a transaction without FITID is
imported, a bank id of any length is taken. An investment statement's cash movements
(INVBANKTRAN) are imported; its trades and positions are named as not imported.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from fractions import Fraction

from domain.money import minor_units
from statements.amounts import COMMA, POINT, quoted
from statements.parsed import (
    End,
    ParsedFile,
    ParsedRow,
    ParsedStatement,
    RowSink,
    checked,
    counted,
    last_digits,
    nothing_to_import,
    read_twice,
    unparsable,
)
from statements.sgml import END, START, Lines, leaf, ofx_text, tags

# Aggregates this reader follows; every other element is a leaf or skipped.
STATEMENTS = {"STMTRS": "bank", "CCSTMTRS": "card", "INVSTMTRS": "investment"}
ACCOUNTS = ("BANKACCTFROM", "CCACCTFROM", "INVACCTFROM")
TRADES = (
    "BUYDEBT", "BUYMF", "BUYOPT", "BUYOTHER", "BUYSTOCK", "CLOSUREOPT", "INCOME", "INVEXPENSE",
    "JRNLFUND", "JRNLSEC", "MARGININTEREST", "REINVEST", "RETOFCAP", "SELLDEBT", "SELLMF",
    "SELLOPT", "SELLOTHER", "SELLSTOCK", "SPLIT", "TRANSFER",
)  # fmt: skip
POSITIONS = ("POSDEBT", "POSMF", "POSOPT", "POSOTHER", "POSSTOCK")
AGGREGATES = frozenset(
    (
        "OFX", "SIGNONMSGSRSV1", "SONRS", "STATUS", "FI", "BANKMSGSRSV1", "STMTTRNRS",
        "CREDITCARDMSGSRSV1", "CCSTMTTRNRS", "INVSTMTMSGSRSV1", "INVSTMTTRNRS", "BANKTRANLIST",
        "STMTTRN", "PAYEE", "BANKACCTTO", "CCACCTTO", "CURRENCY", "ORIGCURRENCY", "LEDGERBAL",
        "AVAILBAL", "BALLIST", "BAL", "INVTRANLIST", "INVBANKTRAN", "INVPOSLIST", "INVBAL",
        "INVOOLIST", "SECLISTMSGSRSV1", "SECLIST", *STATEMENTS, *ACCOUNTS, *TRADES, *POSITIONS,
    )
)  # fmt: skip
# The aggregates whose end closes a STMTTRN left open.
ROW_HOLDERS = frozenset(("BANKTRANLIST", "INVBANKTRAN", *STATEMENTS))
# OFX nests a dozen deep; deeper is no statement.
MAX_DEPTH = 32
KINDS = {
    "CHECKING": "checking", "SAVINGS": "savings", "MONEYMRKT": "savings", "CD": "savings",
    "CREDITLINE": "credit_card",
}  # fmt: skip
_RATE = re.compile(r"(\d{1,12})(?:[.,](\d{1,12}))?")
# Resume point of a statement's second scan: (offset, number of its first STMTTRN).
Resume = tuple[int, int]
# A STMTTRN of leaves only, as banks write most: each leaf a name in capitals right before its
# `>`, its text, and (XML) its own end tag; then the end tag of the STMTTRN (and another one
# right after it, which the tag loop would read as one tag with it). Possessive: linear.
_PLAIN_ROW = re.compile(
    r"<STMTTRN>[^<]*+((?:<(?!STMTTRN>)([A-Z][A-Z0-9_.]*)>[^<]*+(?:</\2>[^<]*+)?)*+)"
    r"</STMTTRN>[^<]*+(?:</STMTTRN>[^<]*+)?"
)
_LEAF = re.compile(r"<([A-Z][A-Z0-9_.]*)>([^<]*+)(?:</\1>[^<]*+)?")


@dataclass
class _File:
    """What the first pass learns about the file beyond its statements."""

    bank_name: str | None = None
    refusals: list[str] = field(default_factory=list)
    not_imported: list[str] = field(default_factory=list)


def read_ofx(data: bytes, currency: str | None = None, sink: RowSink | None = None) -> ParsedFile:
    """Read every bank and card statement of an OFX/QFX file; 422 saying where it fails, or
    `no_transactions` for a file that holds none (a sign-on alone, an error response). With a
    `sink`, every row is read whole in the one pass and handed to it (no stream)."""
    text = ofx_text(data)
    if "<" not in text or "OFX" not in text.upper():
        raise unparsable("it holds no OFX element.", element="OFX")
    found = _File()

    def scan(resume: Resume) -> Iterator[ParsedRow | End]:
        return _scan(text, resume, found, currency, sink is not None)

    statements = read_twice(scan, (0, 1), sink)
    if not statements and found.refusals:
        raise nothing_to_import("; ".join(found.refusals), found.not_imported)
    for statement in statements:
        statement.bank_name = statement.bank_name or found.bank_name
    checked(statements, "bank or card statement", found.not_imported)
    return ParsedFile("ofx", statements, not_imported=found.not_imported)


@dataclass
class _Statement:
    """A statement being read."""

    kind: str
    resume: Resume
    parsed: ParsedStatement = field(default_factory=ParsedStatement)
    trades: int = 0
    positions: int = 0
    balance_error: str | None = None


def _name_currency(statement: _Statement, row: dict[str, str], currency: str | None) -> None:
    """A statement with no CURDEF is in its first row's currency (CURSYM), else the one the
    caller sent."""
    if statement.parsed.currency is None:
        named = row.get("CURRENCY.CURSYM", "").upper()[:3]
        statement.parsed.currency = named or currency


def _scan(
    text: str, resume: Resume, found: _File, currency: str | None, full: bool = False
) -> Iterator[ParsedRow | End]:
    """Rows and statement ends from `resume` on; from the start it also fills `found`, and
    reads of each row only what the first pass needs unless `full`.

    One loop over the tags (statements/sgml.py): a leaf, most of them, is taken at once; the
    start and end of an aggregate go through `_events`, which also ends a STMTTRN a bank
    left open before the next one begins."""
    offset, number = resume
    whole = offset == 0
    dated_only = whole and not full
    lines = Lines(text)
    stack: list[str] = []
    statement: _Statement | None = None
    row: dict[str, str] | None = None
    row_at = 0
    status: dict[str, str] = {}
    open_row = [False]  # a STMTTRN started, and neither it nor an aggregate holding rows ended
    next_tag, pos, cdata = tags(text, offset)
    while (match := next_tag(pos)) is not None:
        pos = match.end()
        slash, name, after, closed = match.groups()
        if not name.isupper():
            name = name.upper()
        if not slash and name not in AGGREGATES:  # a leaf
            value = after.strip()
            if not value or "&" in value:  # none, CDATA, or entities
                value = leaf(text, match, after, cdata)
            parent = stack[-1] if stack else ""
            if row is not None:
                key = name if parent == "STMTTRN" else f"{parent}.{name}"
                row.setdefault(key, value)
            elif statement is not None:
                _statement_leaf(statement, parent, name, value)
            elif parent == "STATUS":
                status.setdefault(name, value)
            elif parent == "FI" and name == "ORG" and value and whole:
                found.bank_name = found.bank_name or value[:80]
            continue
        if (
            name == "STMTTRN"
            and not slash
            and statement is not None
            and not open_row[0]
            and len(stack) < MAX_DEPTH
            and "STMTTRN" not in stack
            and (statement.kind != "investment" or (stack and stack[-1] == "INVBANKTRAN"))
        ):
            # Read as the loop would read them, tag by tag: this one and the plain ones right
            # after it (which leave the stack and `open_row` as they found them).
            at = match.start()
            plain = _plain_row(text, at)
            if plain is not None:
                while plain is not None:
                    fields, pos = plain
                    _name_currency(statement, fields, currency)
                    yield (
                        _dated(fields, number)
                        if dated_only
                        else _row(fields, number, (lines, at), statement, currency)
                    )
                    number, row, at = number + 1, None, pos
                    plain = _plain_row(text, pos)
                continue
        if slash and name not in AGGREGATES:
            continue
        if not slash:
            leaf(text, match, after, cdata)  # an aggregate's text is not used, but read
        at = match.start()
        for kind in _events(name, bool(slash), bool(closed), open_row):
            if kind == END:
                if name not in stack:
                    continue
                while stack:
                    ended = stack.pop()
                    if ended == "STMTTRN" and row is not None and statement is not None:
                        _name_currency(statement, row, currency)
                        # The first pass needs only each row's date and bank id.
                        yield (
                            _dated(row, number)
                            if dated_only
                            else _row(row, number, (lines, row_at), statement, currency)
                        )
                        number, row = number + 1, None
                    elif ended in STATEMENTS and statement is not None:
                        done = _finished(statement, found if whole else _File())
                        yield End(done, statement.resume)
                        statement = None
                        if not whole:
                            return
                    elif ended == "STATUS" and whole:
                        _status(status, stack, found)
                        status = {}
                    if ended == name:
                        break
                continue
            if len(stack) >= MAX_DEPTH:
                line = lines.at(at)
                raise unparsable(
                    f"line {line}: elements are nested more than {MAX_DEPTH} deep.", line=line
                )
            parent = stack[-1] if stack else ""
            stack.append(name)
            if name in STATEMENTS:
                statement = _Statement(STATEMENTS[name], (at, number))
            elif name == "STMTTRN" and statement is not None and _imported(stack, statement):
                row, row_at = {}, at
            elif statement is not None and parent == "INVTRANLIST" and name in TRADES:
                statement.trades += 1
            elif statement is not None and name in POSITIONS:
                statement.positions += 1
    if statement is not None and whole:
        open_at = stack[-1] if stack else "STMTRS"
        raise unparsable(f"the file ends inside {open_at}: it is cut short.", element=open_at)


def _plain_row(text: str, at: int) -> tuple[dict[str, str], int] | None:
    """The STMTTRN starting at `at` read whole when it is a plain one (_PLAIN_ROW, none of its
    leaves an aggregate): its fields as the tag loop would give them (the first of a repeated
    leaf, its text stripped, entities unescaped), and the offset after it; else None."""
    block = _PLAIN_ROW.match(text, at)
    if block is None:
        return None
    start, end = block.span(1)
    found = _LEAF.findall(text, start, end)
    fields = {name: value.strip() for name, value in reversed(found)}  # the first one wins
    if not AGGREGATES.isdisjoint(fields):
        return None
    if text.find("&", start, end) >= 0:
        fields = {k: html.unescape(v) if "&" in v else v for k, v in fields.items()}
    return fields, block.end()


def _events(name: str, slash: bool, closed: bool, open_row: list[bool]) -> list[int]:
    """What the tag of aggregate `name` means, in order: its start (and its end right after,
    for an empty one: <BANKTRANLIST></BANKTRANLIST>), or its end; with the end of a STMTTRN a
    bank left open before the next one begins (`open_row[0]`: whether one is open)."""
    tokens = [END] if slash else [START, END] if closed else [START]
    events: list[int] = []
    for kind in tokens:
        if name == "STMTTRN":
            if kind == START and open_row[0]:
                events.append(END)
            open_row[0] = kind == START
        elif kind == END and name in ROW_HOLDERS:
            open_row[0] = False
        events.append(kind)
    return events


def _imported(stack: list[str], statement: _Statement) -> bool:
    """A STMTTRN of a bank or card statement, or a cash movement of an investment one."""
    parent = stack[-2] if len(stack) > 1 else ""
    return parent == "INVBANKTRAN" if statement.kind == "investment" else True


def _statement_leaf(statement: _Statement, parent: str, name: str, value: str) -> None:
    parsed = statement.parsed
    if parent in ACCOUNTS:
        if name == "ACCTID" and value:
            parsed.bank_ref = value[:64]
            parsed.last_digits = last_digits(value)
        elif name == "ACCTTYPE":
            parsed.kind = KINDS.get(value.upper(), "checking")
    elif name == "CURDEF" and value:
        parsed.currency = value.upper()[:3]
    elif parent == "LEDGERBAL" and name == "BALAMT" and value:
        try:
            parsed.closing_minor = _amount(value, parsed.currency)
        except ValueError as err:  # left unread, and named as not imported
            statement.balance_error = str(err)


def _finished(statement: _Statement, found: _File) -> ParsedStatement:
    parsed = statement.parsed
    account = parsed.bank_ref or "an account"
    if statement.kind == "card":
        parsed.kind = "credit_card"
    elif statement.kind == "investment":
        parsed.kind = "savings"
        skipped = []
        if statement.trades:
            skipped.append(counted(statement.trades, "investment transaction"))
        if statement.positions:
            skipped.append(counted(statement.positions, "position"))
        if skipped:
            what = " and ".join(skipped)
            found.not_imported.append(f"investment statement of {account}: {what}")
    if statement.balance_error is not None:
        why = statement.balance_error
        found.not_imported.append(f"the closing balance (LEDGERBAL) of {account}: {why}")
    return parsed


def _status(status: dict[str, str], stack: list[str], found: _File) -> None:
    """A sign-on or statement response that failed: the bank's message, for the 422."""
    code = status.get("CODE", "0").strip()
    if code in ("0", ""):
        return
    where = "sign-on" if stack and stack[-1] == "SONRS" else "statement request"
    message = status.get("MESSAGE") or status.get("SEVERITY") or "no message"
    found.refusals.append(f"the bank answered the {where} with error {code} ({message[:120]})")


def _row(
    fields: dict[str, str],
    number: int,
    at: tuple[Lines, int],
    statement: _Statement,
    currency: str | None,
) -> ParsedRow:
    """The row of a STMTTRN's `fields`; `at`: where it starts (its line is counted only for
    a row that is not read, whose reason names it)."""
    parsed = statement.parsed
    named = fields.get("CURRENCY.CURSYM", "").upper()[:3]
    # Amounts in another currency than CURDEF, with the rate to it: converted to CURDEF.
    foreign = named if parsed.currency and named and named != parsed.currency else ""
    row_currency = (parsed.currency if foreign else named) or parsed.currency or currency or ""
    name = fields.get("NAME") or fields.get("PAYEE.NAME") or fields.get("EXTDNAME") or ""
    memo = fields.get("MEMO") or ""
    fitid = fields.get("FITID", "").strip()
    row = ParsedRow(
        number,
        None,
        None,
        merchant=(name or memo)[:120],
        description=memo[:255],
        bank_id=fitid[:255] or None,
        currency=row_currency[:3] or None,
    )
    posted = fields.get("DTPOSTED") or fields.get("DTUSER") or ""
    amount = fields.get("TRNAMT", "")
    try:
        if not posted:
            raise ValueError("it has no DTPOSTED")
        try:
            row.posted_on = _date(posted)
        except ValueError as err:
            raise ValueError(f"DTPOSTED {err}") from err
        try:
            if foreign:
                rate = fields.get("CURRENCY.CURRATE", "")
                row.amount_minor = converted(_amount(amount, foreign), foreign, row.currency, rate)
                row.description = f"{memo} ({foreign} {amount} at {rate})".strip()[:255]
            else:
                row.amount_minor = _amount(amount, row.currency)
        except ValueError as err:
            raise ValueError(f"TRNAMT {err}" if amount else "it has no TRNAMT") from err
    except ValueError as err:
        lines, offset = at
        row.reason = f"STMTTRN {number} (line {lines.at(offset)}): {err}"
    return row


def converted(minor: int, source: str, target: str | None, rate: str) -> int:
    """`minor` units of `source` in units of `target` at `rate` (target per source), rounded
    half to even; the rate is read as digits, never as a float or an exponent."""
    found = _RATE.fullmatch(rate.strip())
    if found is None:
        raise ValueError(f"has a CURRATE {quoted(rate)} that is not a rate")
    whole, fraction = found.group(1), found.group(2) or ""
    exact = Fraction(int(whole + fraction), 10 ** len(fraction)) * minor
    shift = minor_units(target or source) - minor_units(source)
    return round(exact * Fraction(10) ** shift)


def _dated(fields: dict[str, str], number: int) -> ParsedRow:
    """A row as the first pass counts it: its date and bank id, nothing read further."""
    try:
        posted = _date(fields.get("DTPOSTED") or fields.get("DTUSER") or "")
    except ValueError:
        posted = None
    return ParsedRow(number, posted, None, bank_id=fields.get("FITID", "").strip()[:255] or None)


def _amount(text: str, currency: str | None) -> int:
    """OFX writes `-12.34`; some banks write `-12,34` or `-1.234,56`: the last mark decides."""
    style = COMMA if text.rfind(",") > text.rfind(".") else POINT
    return style.minor(text, currency, rounded=True)


def _date(text: str) -> date:
    """YYYYMMDD, then optionally a time and a time zone, which are not needed."""
    digits = text[:8]
    if len(digits) < 8 or not digits.isdigit():
        raise ValueError(f"{quoted(text)} is not a date")
    try:  # eight ASCII digits of a real day (else as below)
        return date.fromisoformat(digits)
    except ValueError:
        pass
    try:
        return date(int(digits[:4]), int(digits[4:6]), int(digits[6:8]))
    except ValueError as err:
        raise ValueError(f"{quoted(text)} is not a date ({err})") from err
