"""Which format a file is in, and the one entry point that reads any of them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from domain.errors import UnsupportedMediaType
from statements.camt import read_camt
from statements.csvfile import SavedMapping, read_csv
from statements.dates import DateStyle
from statements.mt940file import read_mt940
from statements.ofx import read_ofx
from statements.parsed import ParsedFile, RowSink
from statements.qif import read_qif
from statements.text import as_utf8, decode, looks_binary

FORMATS = ("ofx", "qif", "camt053", "camt052", "camt054", "mt940", "csv")
EXTENSIONS = {
    "ofx": "ofx", "qfx": "ofx", "qbo": "ofx", "qif": "qif", "xml": "camt053", "camt": "camt053",
    "sta": "mt940", "mt940": "mt940", "940": "mt940", "mt942": "mt940", "942": "mt940",
    "csv": "csv", "tsv": "csv", "txt": None,
}  # fmt: skip
_QIF = re.compile(rb"(?:^|\n)\s*!(?:type|account|option|clear)\b", re.IGNORECASE)
_MT940 = re.compile(rb"(?:^|[\r\n])[\x01\s]*(?::(?:20|25|28C?|60[FM]|61|62[FM]|86):|\{1:F01)")
_CAMT = re.compile(rb"camt\.05[234]|<(?:\w+:)?BkToCstmr(?:Stmt|AcctRpt|DbtCdtNtfctn)")


@dataclass(frozen=True)
class SavedMappings:
    """An account's saved CSV mappings by their columns, as a SavedMapping that pickles (it
    goes to the reader's process with the options)."""

    by_columns: dict[tuple[str, ...], dict[str, Any]]

    def __call__(self, columns: list[str]) -> dict[str, str] | None:
        """The mapping saved for exactly these columns, or None."""
        return self.by_columns.get(tuple(columns))


@dataclass(frozen=True)
class ReadOptions:
    """What the caller says about a file: its format, currency, locale and CSV mapping."""

    format: str | None = None
    currency: str | None = None
    locale: str | None = None
    mapping: dict[str, str] | None = None
    saved: SavedMapping | None = None
    # Set in the reader process: every row read in one pass and handed to it, no stream.
    sink: RowSink | None = None


def detect(data: bytes, filename: str) -> str:
    """The format of `data`, from its content first, then its file name; 415 if neither says."""
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    upper = head.upper()
    if upper.startswith(b"OFXHEADER") or b"<OFX>" in upper or b"<?OFX" in upper:
        return "ofx"
    if _CAMT.search(head):
        return "camt053"
    if _QIF.search(head):
        return "qif"
    if _MT940.search(head):
        return "mt940"
    if head.startswith(b"<"):
        raise UnsupportedMediaType(
            "The file is XML, but neither OFX 2 nor CAMT.052, .053 or .054.", code="unknown_format"
        )
    extension = filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    named = EXTENSIONS.get(extension)
    if named and named != "camt053":
        return named
    if not looks_binary(data) and (b"," in head or b";" in head or b"\t" in head):
        return "csv"
    raise UnsupportedMediaType(
        "The file is in no statement format we read: OFX/QFX, QIF, CAMT.052/.053/.054, "
        "MT940/MT942, CSV/TSV.",
        code="unknown_format",
    )


def read_statement(data: bytes, filename: str, options: ReadOptions) -> ParsedFile:
    """Parse `data` into statements; 415 for an unknown format, 422 saying where it fails."""
    data = as_utf8(data)
    if looks_binary(data):
        raise UnsupportedMediaType("The file is binary, not a statement.", code="unknown_format")
    kind = options.format or detect(data, filename)
    currency, sink = options.currency, options.sink
    if kind == "ofx":
        return read_ofx(data, currency, sink)
    if kind.startswith("camt"):
        return read_camt(data, currency, sink)
    text = decode(data)
    if kind == "mt940":
        return read_mt940(text, currency, sink)
    if kind == "qif":
        day_first = DateStyle.of(options.locale).order.startswith("d") if options.locale else None
        return read_qif(text, currency=currency, day_first=day_first, sink=sink)
    return read_csv(
        text,
        currency=currency,
        locale=options.locale,
        mapping=options.mapping,
        saved=options.saved,
        sink=sink,
    )
