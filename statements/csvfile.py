"""CSV and TSV statements as banks write them: the header found below any preamble (or none,
for a known headerless layout), columns recognised by a bank's layout, a saved mapping, their
names or the caller's mapping; rows read twice from the text (no list of rows is held)."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any

import clevercsv

from domain.errors import Unprocessable
from statements.amounts import POINT, NumberStyle
from statements.columns import (
    HEADERLESS,
    OPTIONS,
    ROLES,
    header_currency,
    is_header,
    looks_like_data,
    recognise,
    suggest,
    unique,
)
from statements.csvrows import Balances, Plan, read_row, skipped
from statements.dates import DateStyle, guess_order
from statements.layouts import Layout, matching, roles_of, shaped
from statements.parsed import (
    ParsedFile,
    ParsedRow,
    ParsedStatement,
    RowSink,
    Tally,
    last_digits,
    unparsable,
)

# Records read to find the header, sniff the dialect and guess the styles.
SAMPLE_ROWS = 40
SAMPLE_CHARS = 32 * 1024
SavedMapping = Callable[[list[str]], dict[str, str] | None]
Record = tuple[int, list[str]]
_IBAN = re.compile(r"\b([A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30})\b")
_MASKED = re.compile(r"[*xX]{2,}\s*(\d{3,})")


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
    sink: RowSink | None = None,
) -> ParsedFile:
    """Read a CSV/TSV statement; 422 `mapping_required` (with the file's real column names)
    when its columns are not recognised. With a `sink`, the rows are read once, each handed
    to it (no stream)."""
    dialect = _sniff(text)
    sample = list(islice(_records(text, dialect), SAMPLE_ROWS))
    header_at, columns, layout = _header(sample, str(dialect.delimiter))
    body = [cells for _line, cells in sample[header_at + 1 :]]
    used = _mapping(mapping, saved, layout, columns)
    roles = {k: v for k, v in used.items() if k in ROLES}
    if not complete(roles):
        line = sample[header_at][0] if header_at >= 0 else None
        raise Unprocessable(
            "The file's columns are not recognised: say which column holds what.",
            code="mapping_required",
            details={
                "columns": columns,
                "suggested_mapping": suggest(columns, body, roles),
                **({"header_line": line} if line else {}),
            },
        )
    plan = _plan(roles, used, layout, columns, body, currency, locale)

    header = [c.strip() for c in sample[header_at][1]] if header_at >= 0 else None

    def records() -> Iterator[Record]:
        """(line, cells) of every row below the header, read from the text again (the header
        repeated among them, empty rows and summary lines left out)."""
        width = len(header) if header is not None else -1
        for at, (line, cells) in enumerate(_records(text, dialect)):
            # Empty: no cell holds anything but spaces.
            if at <= header_at or not "".join(cells).strip() or skipped(cells, plan):
                continue
            if len(cells) == width and [c.strip() for c in cells] == header:
                continue
            yield line, cells

    statement = ParsedStatement(
        currency=_currency(plan, body, currency),
        kind=layout.kind if layout else "checking",
        bank_name=layout.bank if layout else None,
    )
    _preamble(statement, [cells for _line, cells in sample[: max(header_at, 0)]])
    _first_pass(statement, records(), plan, sink)
    if statement.streamed_span is None or statement.streamed_span[2] == 0:
        line = sample[header_at][0] + 1 if header_at >= 0 else 1
        raise unparsable("it holds no rows below its header.", line=line)
    repeated = plan.repeated
    saved_mapping = {**roles, **{k: v for k, v in used.items() if k in OPTIONS}}
    if sink is not None:
        sink.end(statement, frozenset(repeated))
        return ParsedFile("csv", [statement], columns=columns, mapping=saved_mapping)

    def stream() -> Iterator[ParsedRow]:
        for line, cells in records():
            row = read_row(line, cells, plan)
            if row.bank_id is not None and row.bank_id in repeated:
                row.bank_id = None
            yield row

    statement.stream = stream
    return ParsedFile("csv", [statement], columns=columns, mapping=saved_mapping)


def _header(sample: list[Record], delimiter: str) -> tuple[int, list[str], Layout | None]:
    """Where the header is (-1 for none), the column names and the bank's layout."""
    for at, (_line, cells) in enumerate(sample):
        columns = unique(cells)
        layout = matching(columns)
        if layout is not None or is_header(cells):
            return at, columns, layout
    rows = [cells for _line, cells in sample]
    layout = shaped(rows, delimiter)
    first = next((cells for cells in rows if any(c.strip() for c in cells)), None)
    if layout is not None or (first is not None and looks_like_data(first)):
        width = max(len(cells) for cells in rows)
        return -1, [HEADERLESS.format(i) for i in range(1, width + 1)], layout
    widths = [len(unique(cells)) for cells in rows if any(c.strip() for c in cells)]
    if not widths or max(widths) < 2:
        raise unparsable("it has no columns.", line=1)
    common = max(set(widths), key=widths.count)
    at = next(i for i, cells in enumerate(rows) if len(unique(cells)) == common)
    return at, unique(rows[at]), None


def _mapping(
    given: dict[str, str] | None,
    saved: SavedMapping | None,
    layout: Layout | None,
    columns: list[str],
) -> dict[str, str]:
    """The mapping the rows are read with: the caller's, else the account's saved one for these
    columns, else the bank's layout, else the columns' names."""
    if given is not None:
        _check_mapping(given, columns)
        return dict(given)
    remembered = saved(columns) if saved else None
    if remembered:
        return dict(remembered)
    if layout is not None:
        options = {"sign": layout.sign}
        if layout.date_order:
            options["date_order"] = layout.date_order
        return {**roles_of(layout, columns), **options}
    return recognise(columns)


def _check_mapping(mapping: dict[str, str], columns: list[str]) -> None:
    problems: dict[str, list[str]] = {}
    for role, column in mapping.items():
        if role in OPTIONS:
            if column not in OPTIONS[role]:
                problems[role] = [f"Not an option: one of {', '.join(OPTIONS[role])}."]
        elif role not in ROLES:
            problems[role] = [f"Not a role: one of {', '.join(ROLES)}."]
        elif column not in columns:
            problems[role] = [f'The file has no column "{column}".']
    if problems:
        raise Unprocessable("The mapping does not fit the file.", details={"mapping": problems})
    if not complete(mapping):
        raise Unprocessable(
            "The mapping needs date, amount (or debit and credit) and payee or description.",
            field="mapping",
        )


def _plan(
    roles: dict[str, str],
    used: dict[str, str],
    layout: Layout | None,
    columns: list[str],
    body: list[list[str]],
    currency: str | None,
    locale: str | None,
) -> Plan:
    index = {role: columns.index(column) for role, column in roles.items()}
    amounts = [index[r] for r in ("amount", "debit", "credit", "balance") if r in index]
    samples = [row[at] for row in body for at in amounts if at < len(row)]
    if locale:
        numbers = NumberStyle.of(locale)
    elif layout is not None and layout.decimal:
        numbers = NumberStyle(layout.decimal, "." if layout.decimal == "," else ",")
    else:
        numbers = NumberStyle.guess(samples) or POINT
    order = used.get("date_order")
    dates = DateStyle.of(locale) if locale else None
    if not order and dates is None:
        dated = [row[index["date"]] for row in body if index["date"] < len(row)]
        us = layout is not None and layout.country.startswith("US")
        order = guess_order(dated) or ("mdy" if us else "dmy")
    if dates is None or order:
        dates = DateStyle(order or "dmy", dates.language if dates else None)
    money = roles.get("amount") or roles.get("debit") or roles.get("credit") or ""
    return Plan(
        index=index,
        columns=columns,
        numbers=numbers,
        dates=dates,
        currency=header_currency(money) or currency,
        charges_positive=used.get("sign") == "charges_positive",
    )


def _currency(plan: Plan, body: list[list[str]], given: str | None) -> str | None:
    """The statement's currency: its amount header's, else its rows' (a column or the cells'
    symbols), else the caller's."""
    if plan.currency and plan.currency != given:
        return plan.currency
    for cells in body:
        row = read_row(0, cells, plan)
        if row.currency and row.reason is None:
            return row.currency
    return plan.currency


def _preamble(statement: ParsedStatement, rows: list[list[str]]) -> None:
    """The account number the lines above the header give (an IBAN, or `****1234`)."""
    for cells in rows:
        for cell in cells:
            iban = _IBAN.search(cell.upper())
            if iban is not None and statement.bank_ref is None:
                statement.bank_ref = iban.group(1).replace(" ", "")
                statement.last_digits = last_digits(statement.bank_ref)
            masked = _MASKED.search(cell)
            if masked is not None and statement.last_digits is None:
                statement.last_digits = masked.group(1)[-4:]


def _first_pass(
    statement: ParsedStatement, records: Iterator[Record], plan: Plan, sink: RowSink | None
) -> None:
    """Count the rows and find their span, the bank ids used twice, the account number the
    rows give, and the balances a running-balance column states (when it agrees with itself);
    each row to the `sink` if there is one."""
    tally = Tally()
    balances = Balances()
    give = sink.row if sink is not None else None
    for line, cells in records:
        row = read_row(line, cells, plan)
        tally.add(row)
        if give is not None:
            give(row)
        if row.reason is None and row.amount_minor is not None:
            balances.add(row.amount_minor, plan.balance_of(cells))
        if statement.bank_ref is None and "account" in plan.index:
            number = plan.cell(cells, "account").lstrip("'").strip()
            if number:
                statement.bank_ref = number[:64]
                statement.last_digits = last_digits(number)
    plan.repeated = tally.repeated
    statement.streamed_span = tally.span()
    statement.opening_minor, statement.closing_minor = balances.stated()


def _sniff(text: str) -> Any:
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


def _records(text: str, dialect: Any) -> Iterator[Record]:
    """(line the record starts on, its cells) for every record of the text."""
    reader = csv.reader(
        io.StringIO(text, newline=""),
        delimiter=str(dialect.delimiter),
        quotechar=dialect.quotechar or '"',
        escapechar=dialect.escapechar or None,
        strict=False,
    )
    line = 1
    try:
        for cells in reader:
            yield line, cells
            line = reader.line_num + 1
    except csv.Error as err:
        raise unparsable(f"line {reader.line_num}: {err}", line=reader.line_num) from err
