"""What every statement reader returns: statements per account, each with its rows."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Protocol

from domain.errors import Unprocessable

# The kinds of account a statement may say it is (models.finance.ACCOUNT_KINDS).
KINDS = ("checking", "savings", "credit_card")


@dataclass(slots=True)
class ParsedRow:
    """One movement read from a file; `reason` set means it could not be read (invalid)."""

    position: int
    posted_on: date | None
    amount_minor: int | None
    merchant: str = ""
    description: str = ""
    bank_id: str | None = None
    currency: str | None = None
    reason: str | None = None


@dataclass(slots=True)
class ParsedStatement:
    """The rows of one account in a file, with what the file says about that account."""

    bank_ref: str | None = None
    currency: str | None = None
    kind: str = "checking"
    opening_minor: int | None = None
    closing_minor: int | None = None
    # What names the account: the bank (OFX FI/ORG, a BIC, the CSV layout's bank) and the
    # last digits of its number.
    bank_name: str | None = None
    last_digits: str | None = None
    # The account's name as the file gives it (QIF's !Account).
    name: str | None = None
    rows: list[ParsedRow] = field(default_factory=list)
    # A reader that streams leaves `rows` empty and gives them here, read again from the
    # file on each call, with `span` from a first pass: no list of every row is held.
    stream: Callable[[], Iterator[ParsedRow]] | None = None
    streamed_span: tuple[date | None, date | None, int] | None = None

    def each(self) -> Iterator[ParsedRow]:
        """The rows, in file order."""
        return self.stream() if self.stream is not None else iter(self.rows)

    def span(self) -> tuple[date | None, date | None, int]:
        """The first and last date of the rows, and how many rows there are."""
        if self.streamed_span is not None:
            return self.streamed_span
        days = [r.posted_on for r in self.rows if r.posted_on is not None]
        return (min(days) if days else None, max(days) if days else None, len(self.rows))


@dataclass(slots=True)
class ParsedFile:
    """A whole file read: its format and its statements."""

    format: str
    statements: list[ParsedStatement]
    # The CSV columns mapping that was used (saved per account), or None for other formats.
    columns: list[str] | None = None
    mapping: dict[str, Any] | None = None
    # What the file holds that was not imported (investment sections, unreadable balances).
    not_imported: list[str] = field(default_factory=list)
    # CPU seconds the reader process spent on the file (0 when it was read in this one).
    read_cpu: float = 0.0


@dataclass(slots=True)
class End:
    """A scanner's mark that a statement ended; `resume` is where a scan of it starts again."""

    statement: ParsedStatement
    resume: Any


Scan = Callable[[Any], Iterator["ParsedRow | End"]]


class RowSink(Protocol):
    """What a reader given one (the reader process's) hands every row to as it reads it, in
    one pass, instead of a stream that reads the file again: each statement's rows in file
    order, then `end` with that statement and the bank ids its rows gave more than once
    (those rows are told apart by occurrence: their bank id is to be dropped)."""

    def row(self, row: ParsedRow) -> None:
        """One row of the statement being read."""

    def end(self, statement: ParsedStatement, repeated: frozenset[str]) -> None:
        """Every row of `statement` was given."""


class Tally:
    """What a first pass learns of a statement's rows: how many, their first and last date,
    and the bank ids that come twice (such rows are told apart by occurrence)."""

    __slots__ = ("count", "first", "last", "repeated", "seen")

    def __init__(self) -> None:
        self.count = 0
        self.first: date | None = None
        self.last: date | None = None
        self.seen: set[str] = set()
        self.repeated: set[str] = set()

    def add(self, row: ParsedRow) -> None:
        """Count one row."""
        self.count += 1
        day = row.posted_on
        if day is not None:
            self.first = day if self.first is None or day < self.first else self.first
            self.last = day if self.last is None or day > self.last else self.last
        if row.bank_id is not None:
            (self.repeated if row.bank_id in self.seen else self.seen).add(row.bank_id)

    def span(self) -> tuple[date | None, date | None, int]:
        """(first date, last date, rows)."""
        return self.first, self.last, self.count


def read_twice(scan: Scan, start: Any, sink: RowSink | None = None) -> list[ParsedStatement]:
    """The statements `scan(start)` finds, each streaming its rows by scanning again from its
    own `resume` up to its end. The first pass keeps only a Tally of each statement's rows.
    With a `sink`, the scan's rows are whole ones, each handed to it: there is no second pass
    (the statements have no stream)."""
    statements: list[ParsedStatement] = []
    tally = Tally()
    give = sink.row if sink is not None else None
    for item in scan(start):
        if isinstance(item, ParsedRow):
            tally.add(item)
            if give is not None:
                give(item)
            continue
        statement = item.statement
        statement.streamed_span = tally.span()
        if sink is not None:
            sink.end(statement, frozenset(tally.repeated))
        else:
            statement.stream = _rescan(scan, item.resume, frozenset(tally.repeated))
        statements.append(statement)
        tally = Tally()
    return statements


def _rescan(scan: Scan, resume: Any, repeated: frozenset[str]) -> Callable[[], Iterator[ParsedRow]]:
    def rows() -> Iterator[ParsedRow]:
        for item in scan(resume):
            if isinstance(item, End):
                return
            if item.bank_id is not None and item.bank_id in repeated:
                item.bank_id = None
            yield item

    return rows


def unparsable(message: str, **where: object) -> Unprocessable:
    """422 `unparsable_file`: the file does not parse; `where` says at which line or element."""
    return Unprocessable(
        f"The file cannot be read: {message}",
        code="unparsable_file",
        details={key: value for key, value in where.items() if value is not None},
    )


def nothing_to_import(message: str, not_imported: list[str] | None = None) -> Unprocessable:
    """422 `no_transactions`: the file reads, but holds no movement to import."""
    details: dict[str, Any] = {"not_imported": not_imported} if not_imported else {}
    return Unprocessable(
        f"The file holds no transactions to import: {message}",
        code="no_transactions",
        details=details,
    )


def checked(statements: list[ParsedStatement], what: str, not_imported: list[str]) -> None:
    """422 `no_transactions` when no statement has a row."""
    if not statements:
        raise nothing_to_import(f"it holds no {what}.", not_imported)
    if all(st.span()[2] == 0 for st in statements):
        accounts = ", ".join(sorted({st.bank_ref or "the account" for st in statements}))
        raise nothing_to_import(f"the statement of {accounts} lists none.", not_imported)


def counted(count: int, noun: str) -> str:
    """`1 position`, `2 positions`."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def last_digits(number: str | None, keep: int = 4) -> str | None:
    """The last `keep` digits of an account number, for the account's name."""
    if not number:
        return None
    digits = "".join(c for c in number if c.isdigit())
    return digits[-keep:] or None
