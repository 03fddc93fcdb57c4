"""What a real statement file holds, counted without the readers under test: its movements
(STMTTRN, :61:, Ntry, QIF records), their sum, and each statement's stated balances."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from pathlib import Path

SHARED = Path(__file__).resolve().parents[3] / "shared" / "statements"
# QIF sections whose records are movements of an account.
QIF_MOVEMENTS = ("bank", "cash", "ccard", "otha", "othl")


@dataclass
class Held:
    """A file's movements: how many, their sum when every one is readable, and per statement
    the (opening, closing, sum of its movements) it states (None where it states none)."""

    rows: int = 0
    total: Decimal | None = Decimal(0)
    statements: list[tuple[Decimal | None, Decimal | None, Decimal]] = field(default_factory=list)


def files() -> list[Path]:
    """Every statement file of the shared corpus."""
    return sorted(p for p in SHARED.rglob("*") if p.is_file() and p.suffix != ".md")


def held(path: Path) -> Held:
    """What `path` holds, by its format (told by its name)."""
    data = path.read_bytes()
    if path.suffix == ".ofx":
        return _ofx(data)
    if path.suffix == ".xml":
        return _camt(data)
    if path.suffix == ".qif":
        return _qif(data.decode("utf-8", "replace"))
    return _mt940(data.decode("latin-1"))


def _number(text: str) -> Decimal | None:
    try:
        return Decimal(text.strip().replace(",", "."))
    except InvalidOperation:
        return None


def _add(found: Held, value: Decimal | None) -> None:
    found.rows += 1
    found.total = None if found.total is None or value is None else found.total + value


def _ofx(data: bytes) -> Held:
    text = data.decode("latin-1")
    found = Held()
    default = re.search(r"<CURDEF>\s*([A-Z]{3})", text)
    for block in re.findall(r"<STMTTRN>(.*?)</STMTTRN>", text, re.S | re.I):
        amount = re.search(r"<TRNAMT>\s*([^<\s]*)", block, re.I)
        posted = re.search(r"<DTPOSTED>\s*(\d{8})", block, re.I)
        valid = amount is not None and posted is not None and _date_ok(posted.group(1))
        value = _number(amount.group(1)) if valid and amount else None
        # A transaction in another currency (CURRENCY) is converted to CURDEF at CURRATE.
        other = re.search(r"<CURRATE>\s*([\d.]+).*?<CURSYM>\s*([A-Z]{3})", block, re.S)
        if value is not None and other and default and other.group(2) != default.group(1):
            exact = value * Decimal(other.group(1))
            value = exact.quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN)
        _add(found, value)
    for statement in re.findall(r"<(?:CC)?STMTRS>(.*?)</(?:CC)?STMTRS>", text, re.S | re.I):
        closing = re.search(r"<LEDGERBAL>.*?<BALAMT>\s*([^<\s]+)", statement, re.S | re.I)
        found.statements.append((None, _number(closing.group(1)) if closing else None, Decimal(0)))
    return found


def _date_ok(digits: str) -> bool:
    month, day = int(digits[4:6]), int(digits[6:8])
    days = 29 if month == 2 else 30 if month in (4, 6, 9, 11) else 31
    return 1 <= month <= 12 and 1 <= day <= days


def _camt(data: bytes) -> Held:
    text = data.decode("utf-8")
    found = Held()
    for statement in re.findall(r"<(Stmt|Rpt|Ntfctn)>(.*?)</\1>", text, re.S):
        body = statement[1]
        balances: dict[str, Decimal] = {}
        for code, amount, mark in re.findall(
            r"<Bal>.*?<Cd>(\w+)</Cd>.*?<Amt[^>]*>([^<]+)</Amt>\s*<CdtDbtInd>(\w+)</CdtDbtInd>",
            body,
            re.S,
        ):
            value = Decimal(amount) * (-1 if mark == "DBIT" else 1)
            balances.setdefault(code, value)
        movements = Decimal(0)
        for entry in re.findall(r"<Ntry>(.*?)</Ntry>", body, re.S):
            amount = re.search(r"<Amt[^>]*>([^<]+)</Amt>", entry)
            mark = re.search(r"<CdtDbtInd>(\w+)</CdtDbtInd>", entry)
            value = Decimal(amount.group(1)) if amount else None
            if value is not None and mark is not None and mark.group(1) == "DBIT":
                value = -value
            _add(found, value)
            movements += value or 0
        opening = balances.get("OPBD", balances.get("PRCD"))
        found.statements.append((opening, balances.get("CLBD"), movements))
    return found


def _mt940(text: str) -> Held:
    found = Held()
    for chunk in re.split(r"(?m)^\W*:20:", text):
        movements = Decimal(0)
        for mark, amount in re.findall(r"(?m)^:61:\d{6}(?:\d{4})?(R?[CD])[A-Z]?\n?([\d,]+)", chunk):
            value = _number(amount)
            if value is not None and mark in ("D", "RC"):
                value = -value
            _add(found, value)
            movements += value or 0
        opening = re.search(r"(?m)^:60[FM]:([CD])\d{6}[A-Z]{0,3}([\d,]+)", chunk)
        closing = re.search(r"(?m)^:62[FM]:([CD])\d{6}[A-Z]{0,3}([\d,]+)", chunk)
        found.statements.append((_balance(opening), _balance(closing), movements))
    return found


def _balance(found: re.Match[str] | None) -> Decimal | None:
    if found is None:
        return None
    value = _number(found.group(2))
    return None if value is None else value * (-1 if found.group(1) == "D" else 1)


def _qif(text: str) -> Held:
    found = Held()
    kind = ""
    record: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("!"):
            kind = line[1:].replace(" ", "").lower().removeprefix("type:")
            record = []
        elif line == "^":
            _qif_record(found, kind, record)
            record = []
        elif line:
            record.append(line)
    _qif_record(found, kind, record)
    return found


def _qif_record(found: Held, kind: str, record: list[str]) -> None:
    if kind not in QIF_MOVEMENTS or not any(line[0] in "DTU" for line in record):
        return
    amount = next((line[1:] for line in record if line[0] in "TU"), None)
    _add(found, _number(amount.replace(",", "")) if amount else None)
