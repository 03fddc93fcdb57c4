"""CSV and TSV statements: sniffed dialect, recognised or mapped columns, locale-aware values."""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections.abc import Callable, Iterator
from datetime import date
from itertools import islice

import clevercsv

from domain.errors import Unprocessable
from statements.amounts import DateStyle, NumberStyle
from statements.parsed import ParsedFile, ParsedRow, ParsedStatement, unparsable

ROLES = ("date", "amount", "debit", "credit", "payee", "description", "bank_id", "currency")
# Header names banks use, normalised (lower case, letters and digits only, umlauts spelt out).
NAMES: dict[str, tuple[str, ...]] = {
    "date": (
        "date", "bookingdate", "transactiondate", "posted", "posteddate", "postingdate",
        "buchungstag", "buchungsdatum", "datum", "fecha", "data", "dateoperation",
    ),
    "amount": ("amount", "betrag", "umsatz", "montant", "importe", "transactionamount"),
    "debit": (
        "debit", "debitamount", "withdrawal", "withdrawals", "moneyout", "paidout", "soll",
        "ausgang", "belastung", "debit",
    ),
    "credit": (
        "credit", "creditamount", "deposit", "deposits", "moneyin", "paidin", "haben",
        "eingang", "gutschrift",
    ),
    "payee": (
        "payee", "merchant", "name", "counterparty", "beguenstigterzahlungspflichtiger",
        "zahlungsempfaenger", "empfaenger", "auftraggeber", "partner", "beneficiary",
        "auftraggeberempfaenger", "nameauftraggeberzahlungsempfaenger",
    ),
    "description": (
        "description", "memo", "details", "verwendungszweck", "purpose", "reference",
        "narrative", "buchungstext", "text", "libelle", "concepto",
    ),
    "bank_id": ("id", "transactionid", "fitid", "referencenumber", "bankreference", "umsatzid"),
    "currency": ("currency", "waehrung", "devise", "ccy"),
}  # fmt: skip
SPELT = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss"})
# Rows read to find the header and sniff the dialect.
SAMPLE_ROWS = 30
SAMPLE_CHARS = 16 * 1024

SavedMapping = Callable[[list[str]], dict[str, str] | None]


def normalise(name: str) -> str:
    """A header name as NAMES spells it: `Betrag (EUR)` is `betrageur`."""
    folded = unicodedata.normalize("NFC", name).casefold().translate(SPELT)
    return re.sub(r"[^a-z0-9]", "", folded)


def recognise(columns: list[str]) -> dict[str, str]:
    """The roles whose header this file's columns name, exactly or as a prefix."""
    found: dict[str, str] = {}
    keys = [normalise(c) for c in columns]
    for exact in (True, False):
        for role, names in NAMES.items():
            if role in found:
                continue
            for column, key in zip(columns, keys, strict=True):
                if column in found.values():
                    continue
                hit = (
                    key in names if exact else any(key.startswith(n) for n in names if len(n) >= 4)
                )
                if hit:
                    found[role] = column
                    break
    return found


def complete(mapping: dict[str, str]) -> bool:
    """True when `mapping` says where a row's date, amount and payee or description are."""
    has_amount = "amount" in mapping or ("debit" in mapping and "credit" in mapping)
    has_text = "payee" in mapping or "description" in mapping
    return "date" in mapping and has_amount and has_text


def read_csv(
    text: str,
    *,
    currency: str | None,
    locale: str | None,
    mapping: dict[str, str] | None = None,
    saved: SavedMapping | None = None,
) -> ParsedFile:
    """Read a CSV/TSV statement; 422 `mapping_required` when its columns are not recognised."""
    dialect = _sniff(text)
    rows = _rows(text, dialect)
    sample = list(islice(rows, SAMPLE_ROWS))
    header_at, columns = _header(sample)
    body = sample[header_at + 1 :]
    if mapping is not None:
        _check_mapping(mapping, columns)
        used = mapping
    else:
        used = (saved(columns) if saved else None) or recognise(columns)
    if not complete(used):
        raise Unprocessable(
            "The file's columns are not recognised: say which column holds what.",
            code="mapping_required",
            details={"columns": columns, "suggested_mapping": _suggest(columns, body, used)},
        )
    index = {role: columns.index(column) for role, column in used.items() if role in ROLES}
    numbers = _number_style(locale, body, index)
    dates = DateStyle.of(locale) if locale else _date_style(body, index["date"])

    def body_rows() -> Iterator[tuple[int, list[str]]]:
        """(line, cells) of every non-empty row after the header, read from the text again."""
        for line, cells in enumerate(_rows(text, dialect), start=1):
            if line > header_at + 1 and any(c.strip() for c in cells):
                yield line, cells

    def stream() -> Iterator[ParsedRow]:
        for line, cells in body_rows():
            yield _row(line, cells, index, columns, numbers, dates, currency)

    statement = ParsedStatement(currency=currency, stream=stream)
    statement.streamed_span = _span(body_rows(), index["date"], dates)
    if statement.streamed_span[2] == 0:
        raise unparsable("it holds no rows below its header.", line=header_at + 2)
    return ParsedFile("csv", [statement], columns=columns, mapping=used)


def _span(
    rows: Iterator[tuple[int, list[str]]], at: int, dates: DateStyle
) -> tuple[date | None, date | None, int]:
    """First pass: the earliest and latest readable date, and the number of rows."""
    first = last = None
    count = 0
    for _line, cells in rows:
        count += 1
        try:
            day = dates.parse(cells[at]) if at < len(cells) else None
        except ValueError:
            continue
        if day is not None:
            first = day if first is None or day < first else first
            last = day if last is None or day > last else last
    return first, last, count


def _sniff(text: str) -> csv.Dialect | clevercsv.dialect.SimpleDialect:
    head = text[:SAMPLE_CHARS]
    cut = head.rfind("\n")
    head = head[: cut + 1] if cut > 0 else head
    try:
        dialect = clevercsv.Sniffer().sniff(head, delimiters=[",", ";", "\t", "|"])
    except Exception as err:  # clevercsv raises several kinds on text it cannot read
        raise unparsable("no CSV dialect fits it.", line=1) from err
    if dialect is None or not dialect.delimiter:
        raise unparsable("no CSV dialect fits it.", line=1)
    return dialect


def _rows(text: str, dialect: csv.Dialect | clevercsv.dialect.SimpleDialect) -> Iterator[list[str]]:
    reader = csv.reader(
        io.StringIO(text, newline=""),
        delimiter=str(dialect.delimiter),
        quotechar=dialect.quotechar or '"',
        escapechar=dialect.escapechar or None,
        strict=False,
    )
    try:
        yield from reader
    except csv.Error as err:
        raise unparsable(str(err), line=reader.line_num) from err


def _header(sample: list[list[str]]) -> tuple[int, list[str]]:
    """The header is the first row as wide as most rows (preambles above it are skipped)."""
    widths = [len(r) for r in sample if any(c.strip() for c in r)]
    if not widths or max(widths) < 2:
        raise unparsable("it has no columns.", line=1)
    common = max(set(widths), key=widths.count)
    for at, row in enumerate(sample):
        if len(row) == common:
            return at, [c.strip() for c in row]
    raise unparsable("it has no header row.", line=1)  # pragma: no cover - common is a width


def _check_mapping(mapping: dict[str, str], columns: list[str]) -> None:
    problems: dict[str, list[str]] = {}
    for role, column in mapping.items():
        if role not in ROLES:
            problems[role] = [f"Not a role: one of {', '.join(ROLES)}."]
        elif column not in columns:
            problems[role] = [f"The file has no column {column!r}."]
    if problems:
        raise Unprocessable("The mapping does not fit the file.", details={"mapping": problems})
    if not complete(mapping):
        raise Unprocessable(
            "The mapping needs date, amount (or debit and credit) and payee or description.",
            field="mapping",
        )


def _suggest(columns: list[str], body: list[list[str]], known: dict[str, str]) -> dict[str, str]:
    """The recognised roles plus a guess by content for date, amount and payee."""
    suggestion = dict(known)
    taken = set(known.values())
    for role, test in (("date", _datelike), ("amount", _numberlike), ("payee", _textlike)):
        if role in suggestion or (role == "amount" and "debit" in suggestion):
            continue
        for at, column in enumerate(columns):
            values = [r[at] for r in body if at < len(r) and r[at].strip()]
            if column not in taken and values and all(test(v) for v in values):
                suggestion[role] = column
                taken.add(column)
                break
    return suggestion


def _datelike(value: str) -> bool:
    return bool(re.fullmatch(r"\s*\d{1,4}[./-]\d{1,2}[./-]\d{1,4}\s*", value))


def _numberlike(value: str) -> bool:
    return bool(re.fullmatch(r"\s*[-+(]?[\d.,' ]*\d[)-]?\s*[A-Z€$£]*\s*", value))


def _textlike(value: str) -> bool:
    return not _datelike(value) and not _numberlike(value)


def _number_style(locale: str | None, body: list[list[str]], index: dict[str, int]) -> NumberStyle:
    if locale:
        return NumberStyle.of(locale)
    cells = [index[r] for r in ("amount", "debit", "credit") if r in index]
    samples = [row[at] for row in body for at in cells if at < len(row)]
    return NumberStyle.guess(samples) or NumberStyle(".", ",")


def _date_style(body: list[list[str]], at: int) -> DateStyle:
    """Day first unless a value says month first (a second number over 12)."""
    for row in body:
        parts = re.findall(r"\d+", row[at]) if at < len(row) else []
        if len(parts) == 3 and len(parts[0]) <= 2:
            if int(parts[1]) > 12:
                return DateStyle("mdy")
            if int(parts[0]) > 12:
                return DateStyle("dmy")
    return DateStyle("dmy")


def _row(
    line: int,
    cells: list[str],
    index: dict[str, int],
    columns: list[str],
    numbers: NumberStyle,
    dates: DateStyle,
    currency: str | None,
) -> ParsedRow:
    def cell(role: str) -> str:
        at = index.get(role)
        return cells[at].strip() if at is not None and at < len(cells) else ""

    payee, description = cell("payee"), cell("description")
    row = ParsedRow(
        line,
        None,
        None,
        merchant=(payee or description)[:120],
        description=description[:255],
        bank_id=cell("bank_id")[:255] or None,
        currency=(cell("currency").upper() or currency),
    )
    if len(cells) != len(columns):
        row.reason = f"line {line}: {len(cells)} fields where the header has {len(columns)}"
        return row
    try:
        row.posted_on = dates.parse(cell("date"))
    except ValueError as err:
        row.reason = f"line {line}, column {columns[index['date']]!r}: {err}"
        return row
    try:
        row.amount_minor = _amount(cell, numbers, row.currency or "EUR")
    except ValueError as err:
        row.reason = f"line {line}: {err}"
    return row


def _amount(cell: Callable[[str], str], numbers: NumberStyle, currency: str) -> int:
    if cell("amount") or not (cell("debit") or cell("credit")):
        return numbers.parse(cell("amount"), currency)
    debit = abs(numbers.parse(cell("debit"), currency)) if cell("debit") else 0
    credit = abs(numbers.parse(cell("credit"), currency)) if cell("credit") else 0
    return credit - debit
