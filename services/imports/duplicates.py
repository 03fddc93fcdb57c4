"""Which rows of a statement the account already holds: by bank id, by exact match counted by
occurrence, or possibly (same amount within a few days and a similar payee)."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, timedelta
from difflib import SequenceMatcher

from statements.parsed import ParsedRow

# The largest amount, in minor units, a row may have (stored in 64 bits, with room for sums).
LARGEST = 10**15
# How far apart in days a row and an existing one may be to possibly be the same movement.
POSSIBLE_DAYS = 4
SIMILAR = 0.6
_WORDS = re.compile(r"[^\W\d_]{3,}")


@dataclass(slots=True)
class Existing:
    """A transaction the account already holds, as duplicate detection reads it."""

    id: int
    posted_on: date
    amount_minor: int
    merchant: str
    description: str
    bank_id: str | None


@dataclass(slots=True)
class Verdict:
    """A row's status, why, and the existing transaction it matches."""

    status: str
    reason: str | None = None
    matched: int | None = None


def text_key(merchant: str, description: str) -> str:
    """What "the same description" compares: both texts, case and spacing folded."""
    return " ".join(f"{merchant} {description}".casefold().split())


def similar(a: str, b: str) -> bool:
    """True when two payees look like one: a shared word, or mostly the same letters."""
    words_a, words_b = set(_WORDS.findall(a.casefold())), set(_WORDS.findall(b.casefold()))
    if words_a & words_b:
        return True
    return SequenceMatcher(None, a.casefold(), b.casefold()).ratio() >= SIMILAR


class Matcher:
    """Classifies a statement's rows against an account's existing transactions.

    Lookups go through dictionaries built once (by bank id, by exact key, by amount), so a
    file of N rows costs N lookups, never N scans. An existing transaction matches at most
    one row: two identical debits in the file against one stored are a duplicate and a new.
    A stored transaction's bank id is always its own: a row carrying it is a duplicate
    wherever it is in the file, and a row without a bank id that looks like a stored one
    that has one is only a possible duplicate (left to review), which uses nothing up.
    """

    def __init__(self, existing: list[Existing]) -> None:
        self.by_bank_id = {e.bank_id: e for e in existing if e.bank_id}
        self.exact: dict[tuple[date, int, str], list[Existing]] = defaultdict(list)
        self.by_amount: dict[int, list[Existing]] = defaultdict(list)
        for e in sorted(existing, key=lambda e: e.id):
            self.exact[(e.posted_on, e.amount_minor, text_key(e.merchant, e.description))].append(e)
            self.by_amount[e.amount_minor].append(e)
        self.used: set[int] = set()
        self.file_bank_ids: dict[str, int] = {}

    def classify(self, row: ParsedRow) -> Verdict:
        """The row's status; a match found is used up."""
        if row.reason is not None or row.posted_on is None or row.amount_minor is None:
            return Verdict("invalid", row.reason or "no date or amount")
        if abs(row.amount_minor) > LARGEST:
            return Verdict("invalid", f"row {row.position}: the amount is too large")
        if row.bank_id:
            earlier = self.file_bank_ids.get(row.bank_id)
            if earlier is not None:
                return Verdict("duplicate", f"the same bank id as row {earlier} of this file")
            self.file_bank_ids[row.bank_id] = row.position
            same = self.by_bank_id.get(row.bank_id)
            if same is not None:  # always: nothing else uses up one with a bank id
                self.used.add(same.id)
                return Verdict("duplicate", "the same bank id", same.id)
        if row.amount_minor not in self.by_amount:
            return Verdict("new")  # nothing stored of this amount: no match of any kind
        key = (row.posted_on, row.amount_minor, text_key(row.merchant, row.description))
        for candidate in self.exact.get(key, ()):
            if candidate.id in self.used:
                continue
            if candidate.bank_id and row.bank_id and candidate.bank_id != row.bank_id:
                continue  # different bank ids: two movements, however alike
            if candidate.bank_id and not row.bank_id:
                # Without a bank id on both sides nothing proves it: the user decides. The
                # stored one is not used up: a row with its bank id, later in the file, is
                # its duplicate all the same.
                return Verdict("possible_duplicate", "same date, amount and text", candidate.id)
            self.used.add(candidate.id)
            return Verdict("duplicate", "same account, date, amount and description", candidate.id)
        return self._possible(row)

    def _possible(self, row: ParsedRow) -> Verdict:
        assert row.posted_on is not None and row.amount_minor is not None
        window = timedelta(days=POSSIBLE_DAYS)
        payee = f"{row.merchant} {row.description}"
        for candidate in self.by_amount.get(row.amount_minor, ()):
            if candidate.id in self.used or abs(candidate.posted_on - row.posted_on) > window:
                continue
            if candidate.bank_id and row.bank_id and candidate.bank_id != row.bank_id:
                continue
            if similar(payee, f"{candidate.merchant} {candidate.description}"):
                if not candidate.bank_id or row.bank_id:
                    self.used.add(candidate.id)  # one with a bank id waits for its own
                when = _days(candidate.posted_on, row.posted_on)
                reason = f"an existing row of the same amount {when} with a similar payee"
                return Verdict("possible_duplicate", reason, candidate.id)
        return Verdict("new")


def _days(a: date, b: date) -> str:
    gap = abs((a - b).days)
    return "on the same day" if gap == 0 else f"{gap} day{'s' if gap > 1 else ''} apart"
