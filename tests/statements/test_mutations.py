"""Real files cut, flipped and stuffed: the readers answer with rows or a 4xx, never anything
else (no exception of their own, no 5xx, no Python repr in a message)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from domain.errors import APIError
from statements.read import ReadOptions, read_statement

TESTS = Path(__file__).resolve().parents[1]
SHARED = TESTS.parents[1] / "shared" / "statements"
FILES = sorted(
    [p for p in SHARED.rglob("*") if p.is_file() and p.suffix != ".md"]
    + [p for p in (TESTS / "imports" / "layouts").iterdir()]
    + [p for p in (TESTS / "imports" / "samples").iterdir() if p.suffix != ".json"]
)
STUFFING = (
    b"<", b">", b"]]>", b"<![CDATA[", b"\n:61:", b"\n^\n", b";", b'"', b"\x00", b"-",
    b"1E+999999", b"NaN", b"<STMTTRN>", b"</STMTRS>", b"\n!Type:Invst\n", b"<!DOCTYPE x>",
)  # fmt: skip
REPRS = ("object at 0x", "Decimal(", "datetime.", "Traceback")


def mutated(data: bytes, seed: int) -> bytes:
    """`data` cut short, with bytes flipped, stuffed with markup, or with a part repeated."""
    rnd = random.Random(seed)
    if not data:
        return data
    changed = bytearray(data)
    kind, at = seed % 4, rnd.randrange(len(data))
    if kind == 0:
        return bytes(changed[:at])
    if kind == 1:
        for _ in range(8):
            changed[rnd.randrange(len(changed))] = rnd.randrange(256)
        return bytes(changed)
    if kind == 2:
        return data[:at] + rnd.choice(STUFFING) * rnd.randrange(1, 200) + data[at:]
    return data[:at] + data[at : at + 120] * rnd.randrange(2, 30) + data[at:]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_damaged_file_gets_rows_or_a_4xx(path: Path) -> None:
    data = path.read_bytes()
    for seed in range(4):
        try:
            parsed = read_statement(mutated(data, seed), path.name, ReadOptions(currency="EUR"))
            for statement in parsed.statements:
                statement.span()
                reasons = [row.reason or "" for row in statement.each()]
                assert not any(marker in r for r in reasons for marker in REPRS)
        except APIError as err:
            assert err.status < 500, err.message
            assert not any(marker in err.message for marker in REPRS), err.message
