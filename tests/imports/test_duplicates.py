"""Duplicate detection by itself: bank ids, occurrence counting, possible duplicates."""

from __future__ import annotations

from datetime import date

from services.imports.duplicates import Existing, Matcher, similar
from statements.parsed import ParsedRow

DAY = date(2026, 3, 5)


def row(position: int, amount: int = -420, merchant: str = "Bakery", **kw: object) -> ParsedRow:
    """A parsed row on DAY unless told otherwise."""
    return ParsedRow(position, kw.pop("day", DAY), amount, merchant, **kw)  # type: ignore[arg-type]


def stored(ident: int, amount: int = -420, merchant: str = "Bakery", **kw: object) -> Existing:
    """An existing transaction on DAY unless told otherwise."""
    return Existing(ident, kw.get("day", DAY), amount, merchant, "", kw.get("bank_id"))  # type: ignore[arg-type]


def statuses(matcher: Matcher, rows: list[ParsedRow]) -> list[tuple[str, int | None]]:
    return [(v.status, v.matched) for v in map(matcher.classify, rows)]


def test_identical_rows_are_counted_by_occurrence() -> None:
    assert statuses(Matcher([]), [row(1), row(2)]) == [("new", None), ("new", None)]
    assert statuses(Matcher([stored(7)]), [row(1), row(2)]) == [("duplicate", 7), ("new", None)]
    two = Matcher([stored(7), stored(8)])
    assert statuses(two, [row(1), row(2), row(3)]) == [
        ("duplicate", 7),
        ("duplicate", 8),
        ("new", None),
    ]


def test_the_same_bank_id_is_a_duplicate_whatever_else_differs() -> None:
    matcher = Matcher([stored(7, bank_id="F1")])
    assert statuses(matcher, [row(1, -999, "Other", bank_id="F1")]) == [("duplicate", 7)]


def test_different_bank_ids_are_never_merged() -> None:
    matcher = Matcher([stored(7, bank_id="F1")])
    assert statuses(matcher, [row(1, bank_id="F2")]) == [("new", None)]


def test_a_repeated_bank_id_in_one_file_is_a_duplicate_of_its_first_row() -> None:
    verdicts = [Matcher([]).classify(r) for r in (row(1, bank_id="F1"), row(2, bank_id="F1"))]
    matcher = Matcher([])
    verdicts = [matcher.classify(r) for r in (row(1, bank_id="F1"), row(2, bank_id="F1"))]
    assert [v.status for v in verdicts] == ["new", "duplicate"]
    assert verdicts[1].reason == "the same bank id as row 1 of this file"


def test_a_row_without_a_bank_id_against_one_with_is_only_possible() -> None:
    matcher = Matcher([stored(7, bank_id="F1")])
    assert statuses(matcher, [row(1)]) == [("possible_duplicate", 7)]


def test_same_amount_a_few_days_apart_with_a_similar_payee_is_possible() -> None:
    matcher = Matcher([stored(7, merchant="Blue Heron Bakery")])
    near = row(1, merchant="BLUE HERON BAKERY #12", day=date(2026, 3, 8))
    far = row(2, merchant="Blue Heron Bakery", day=date(2026, 3, 20))
    other = row(3, merchant="Corner Kiosk", day=date(2026, 3, 6))
    assert statuses(matcher, [far, other, near]) == [
        ("new", None),
        ("new", None),
        ("possible_duplicate", 7),
    ]


def test_unreadable_rows_are_invalid_with_their_reason() -> None:
    broken = ParsedRow(4, None, None, reason="line 4: 'x' is not a date")
    verdict = Matcher([]).classify(broken)
    assert (verdict.status, verdict.reason) == ("invalid", "line 4: 'x' is not a date")


def test_similar_payees() -> None:
    assert similar("Blue Heron Bakery", "BLUE HERON BAKERY 1234")
    assert similar("Streamflix", "STREAMFLIX.COM")
    assert not similar("Corner Kiosk", "Blue Heron Bakery")
