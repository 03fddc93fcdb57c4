"""What every statement reader returns: statements per account, each with its rows."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date

from domain.errors import Unprocessable


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
    rows: list[ParsedRow] = field(default_factory=list)
    # A reader that streams (CSV) leaves `rows` empty and gives them here, read again from
    # the file on each call, with `span` from a first pass: no list of every row is held.
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
    mapping: dict[str, str] | None = None


def unparsable(message: str, **where: object) -> Unprocessable:
    """422 `unparsable_file`: the file does not parse; `where` says at which line or element."""
    return Unprocessable(
        f"The file cannot be read: {message}",
        code="unparsable_file",
        details={key: value for key, value in where.items() if value is not None},
    )
