"""Recurring series in a user's history: weekly to yearly, money in and out, price changes.

Pure: rows in, series out. Rows are grouped by direction, currency and normalised merchant
(`merchant_key`: case, reference numbers, payment prefixes and legal suffixes taken out, and
near-identical spellings joined). A group, or its rows of one amount level, is a series when
its charges come one per cycle on a regular cadence (a skipped cycle is tolerated) and its
amount is steady (small drift, and price changes that hold) or, for monthly and longer
cadences, varies moderately (a utility bill).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta
from difflib import SequenceMatcher
from itertools import pairwise
from statistics import mean, median_low, pstdev

from tools.finance.clock import add_months, days_in_month


@dataclass(frozen=True)
class Cadence:
    """A repeat interval: accepted gaps in days, its step, charges per month, fewest charges."""

    name: str
    min_gap: int
    max_gap: int
    step_days: int
    step_months: int
    per_month: tuple[int, int]  # charges per month as a fraction (numerator, denominator)
    fewest: int


CADENCES = (
    Cadence("weekly", 6, 8, 7, 0, (52, 12), 4),
    Cadence("biweekly", 12, 16, 14, 0, (26, 12), 3),
    Cadence("monthly", 25, 36, 0, 1, (1, 1), 3),
    Cadence("quarterly", 80, 100, 0, 3, (1, 3), 3),
    Cadence("yearly", 345, 385, 0, 12, (1, 12), 2),
)
# A bill whose amount varies (electricity) is a series if it varies this little (stdev/mean).
VARIES_AT_MOST = 0.35
# A subscription among one-off purchases at one shop has one price: its rows are found among
# the shop's by amounts this close (in percent), and it takes this many of them to tell it
# from a few purchases that happen to cost the same at regular times.
LEVEL_PCT = 1
LEVEL_FEWEST = 5
# A weekly or biweekly amount may only jitter this little (stdev/mean).
JITTERS_AT_MOST = 0.06
# A varying amount needs more evidence than a steady one.
VARYING_FEWEST = 4
# At most this share of a series' gaps may be irregular (a late or an extra charge).
IRREGULAR_SHARE = 0.2


@dataclass(frozen=True)
class Row:
    """One transaction as the detector sees it; `amount` is signed minor units."""

    id: int
    day: date
    amount: int
    merchant: str
    currency: str
    account: str = ""
    category: str | None = None
    flow: str = "spending"


@dataclass(frozen=True)
class PriceChange:
    """The amount of a series moved from one level to another, from `since` on."""

    before: int
    after: int
    since: date


@dataclass(frozen=True)
class Series:
    """A detected series: its rows (oldest first) and what they say. Amounts are positive."""

    id: str
    key: str
    direction: str  # "out" or "in"
    currency: str
    cadence: Cadence
    rows: tuple[Row, ...]
    typical: int
    expected: int  # the amount of the next charge: the latest level, or the recent average
    varies: bool
    changes: tuple[PriceChange, ...] = field(default=())

    @property
    def last(self) -> Row:
        """The latest row of the series."""
        return self.rows[-1]

    def next_dates(self, after: date, until: date) -> list[date]:
        """Return the expected dates of the series in (`after`, `until`], in order."""
        out, day = [], self.last.day
        for _ in range(2000):
            day = step(day, self.cadence, self.usual_day())
            if day > until:
                break
            if day > after:
                out.append(day)
        return out

    def next_expected(self, today: date) -> date:
        """Return the first expected date on or after `today` (a missed one rolls forward)."""
        found = self.next_dates(today - timedelta(days=1), today + timedelta(days=400 * 3))
        return found[0] if found else step(self.last.day, self.cadence, self.usual_day())

    def missed(self, today: date) -> int:
        """Return how many expected charges have not come by `today` (with a few days' grace)."""
        grace = max(3, (self.cadence.max_gap - self.cadence.min_gap) // 2)
        return len(self.next_dates(self.last.day, today - timedelta(days=grace)))

    def usual_day(self) -> int:
        """Return the day of month the series usually falls on (its latest charges; on a tie,
        the latest's)."""
        recent = [r.day.day for r in self.rows[-6:]]
        counts = Counter(recent)
        most = max(counts.values())
        return next(d for d in reversed(recent) if counts[d] == most)

    def monthly(self) -> int:
        """Return the expected amount per month, rounded half up."""
        num, den = self.cadence.per_month
        return (self.expected * num * 2 + den) // (2 * den)


def step(day: date, cadence: Cadence, usual: int) -> date:
    """Return the next date after `day` on `cadence`, on the usual day of month if monthly."""
    if cadence.step_days:
        return day + timedelta(days=cadence.step_days)
    # Bill on the usual day of month, even after a short month clamped it (Jan 31 -> Feb 28).
    target = add_months(day.replace(day=1), cadence.step_months)
    return target.replace(day=min(usual, days_in_month(target.year, target.month)))


# Words that say how a payment was made, not who was paid; legal forms; web address parts.
_NOISE = (
    "pos dd so sepa ach ref pmt payment payments purchase debit credit card direct recurring "
    "online contactless visa mastercard mc paypal sq sumup zettle inc ltd llc plc gmbh ag sa "
    "sarl bv ab co corp corporation company limited com www http https net org uk usa eu "
    "subscription bill"
)
NOISE = frozenset(_NOISE.split())
SIMILAR = 0.88  # spellings this alike (difflib ratio) name the same merchant


def merchant_key(name: str) -> str:
    """Return a merchant's name normalised: "NETFLIX.COM *4321" -> "netflix"."""
    plain = unicodedata.normalize("NFKD", name.lower())
    plain = "".join(ch for ch in plain if not unicodedata.combining(ch))
    plain = plain.replace("'", "").replace("\u2019", "")
    words = [w for w in re.split(r"[^a-z0-9]+", plain) if w]
    kept = [w for w in words if w not in NOISE and not any(ch.isdigit() for ch in w)]
    return " ".join(kept) or " ".join(words) or name.strip().lower()


def series_id(direction: str, currency: str, key: str) -> str:
    """Return a series' stable id: the same merchant, currency and direction, the same id."""
    digest = hashlib.sha256(f"{direction}|{currency}|{key}".encode()).hexdigest()
    return f"s{digest[:12]}"


def detect_all(rows: Iterable[Row], tolerance_pct: int, fewest: int | None) -> list[Series]:
    """Return every series in `rows` (any order), by group; `fewest` overrides the cadences'."""
    groups: dict[tuple[str, str], dict[str, list[Row]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r.amount != 0:
            direction = "out" if r.amount < 0 else "in"
            groups[(direction, r.currency)][merchant_key(r.merchant)].append(r)
    found: list[Series] = []
    for (direction, currency), by_key in groups.items():
        for members in _joined(by_key):
            members.sort(key=lambda r: (r.day, r.id))
            series = detect(members, tolerance_pct, fewest)
            if series is not None:
                # Named by the shortest spelling among its own rows: it holds as rows come.
                key = min(
                    {merchant_key(r.merchant) for r in series.rows}, key=lambda k: (len(k), k)
                )
                ident = series_id(direction, currency, key)
                found.append(_named(series, ident, key, direction, currency))
    return found


def _named(s: Series, ident: str, key: str, direction: str, currency: str) -> Series:
    return Series(
        ident,
        key,
        direction,
        currency,
        s.cadence,
        s.rows,
        s.typical,
        s.expected,
        s.varies,
        s.changes,
    )


def _joined(by_key: dict[str, list[Row]]) -> list[list[Row]]:
    """Join the spellings of one merchant: near-identical ones ("acme payrol", "acme payroll")
    and longer ones after a shorter ("vattenfall europe sales" after "vattenfall")."""
    homes: dict[str, list[Row]] = {}
    for key in sorted(by_key, key=lambda k: (len(k), k)):
        words = key.split()
        home = next(
            (
                h
                for h in homes
                if words[: len(h.split())] == h.split()
                or SequenceMatcher(None, h, key).ratio() >= SIMILAR
            ),
            None,
        )
        homes.setdefault(home or key, []).extend(by_key[key])
    return list(homes.values())


def detect(rows: list[Row], tolerance_pct: int, fewest: int | None = None) -> Series | None:
    """Return the series among one merchant's rows (oldest first), or None.

    The whole group is tried (a steady or a varying bill), each of its spellings alone ("Amazon
    Prime" among "Amazon" purchases), then each amount level of it on its own (a subscription
    among one-off purchases at the same shop).
    """
    spellings: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        spellings[merchant_key(r.merchant)].append(r)
    candidates = [(rows, True)]
    if len(spellings) > 1:
        candidates += [(group, True) for group in spellings.values()]
    candidates += [(level, False) for level in _levels(rows, LEVEL_PCT)]
    best: Series | None = None
    for subset, whole in candidates:
        found = _series(subset, tolerance_pct, fewest, whole)
        if found is not None and (best is None or len(found.rows) > len(best.rows)):
            best = found
    return best


def _levels(rows: list[Row], tolerance_pct: int) -> list[list[Row]]:
    """Return the rows grouped by amount: each group within tolerance of its median."""
    ordered = sorted(rows, key=lambda r: abs(r.amount))
    groups: list[list[Row]] = []
    for r in ordered:
        if groups and _close(abs(r.amount), abs(groups[-1][0].amount), tolerance_pct):
            groups[-1].append(r)
        else:
            groups.append([r])
    return [sorted(g, key=lambda r: (r.day, r.id)) for g in groups if 2 <= len(g) < len(rows)]


def _close(a: int, b: int, tolerance_pct: int) -> bool:
    return abs(a - b) * 100 <= tolerance_pct * min(abs(a), abs(b))


def _series(rows: list[Row], tolerance_pct: int, fewest: int | None, whole: bool) -> Series | None:
    if len(rows) < 2:
        return None
    gaps = [(b.day - a.day).days for a, b in pairwise(rows)]
    cadence = _cadence(gaps)
    if cadence is None:
        return None
    least = fewest if fewest is not None else cadence.fewest
    # Among other purchases at the same merchant a series needs more charges to stand out.
    if len(rows) < max(least, 2) or (not whole and len(rows) < LEVEL_FEWEST):
        return None
    once = sum(cadence.min_gap <= g <= cadence.max_gap for g in gaps)
    twice = sum(2 * cadence.min_gap <= g <= 2 * cadence.max_gap for g in gaps)
    irregular = len(gaps) - once - twice
    if irregular > int(IRREGULAR_SHARE * len(gaps)) or twice * 3 > len(gaps) + 1:
        return None
    if not whole and (irregular or twice > 1):
        return None  # among other purchases, only a charge that comes every cycle stands out
    amounts = [abs(r.amount) for r in rows]
    steady = _steady(rows, tolerance_pct)
    if steady is not None:
        changes, expected = steady
        return Series(
            "", "", "", "", cadence, tuple(rows), median_low(amounts), expected, False, changes
        )
    # A weekly habit of varying amounts is shopping, not a bill: only a slight jitter passes.
    most = VARIES_AT_MOST if cadence.min_gap >= CADENCES[2].min_gap else JITTERS_AT_MOST
    if len(rows) < VARYING_FEWEST or pstdev(amounts) > most * mean(amounts):
        return None
    expected = round(mean(amounts[-3:]))
    return Series("", "", "", "", cadence, tuple(rows), median_low(amounts), expected, True)


def _cadence(gaps: list[int]) -> Cadence | None:
    gap = median_low(gaps)
    return next((c for c in CADENCES if c.min_gap <= gap <= c.max_gap), None)


def _steady(rows: list[Row], tolerance_pct: int) -> tuple[tuple[PriceChange, ...], int] | None:
    """Return the price changes and the next amount (the latest) of a steady series, or None
    if it varies.

    Each amount stays near the one before it (drift) or near its level's median; a move
    beyond that starts a new level when the next amount stays there too (or it is the latest
    charge), at most three levels. A price change is a new level, or a smaller move from one
    fixed price (charged at least twice) to another that holds (or is the latest charge).
    """
    amounts = [abs(r.amount) for r in rows]
    levels: list[list[int]] = [[0]]  # indexes of the rows at each level
    for i in range(1, len(amounts)):
        level = [amounts[j] for j in levels[-1]]
        a = amounts[i]
        if _close(a, level[-1], tolerance_pct) or _close(a, median_low(level), tolerance_pct):
            levels[-1].append(i)
            continue
        last = i == len(amounts) - 1
        if not last and not _close(amounts[i + 1], a, tolerance_pct):
            return None  # a one-off amount in the middle: not one steady series
        levels.append([i])
    if len(levels) > 3 or (len(levels) > 1 and len(levels[0]) < 2):
        return None
    starts = {after[0] for after in levels[1:]}
    runs = _runs(amounts)
    for before, after in pairwise(runs):
        held = len(after) >= 2 or after[-1] == len(amounts) - 1
        if len(before) >= 2 and held:
            starts.add(after[0])
    changes = tuple(PriceChange(amounts[i - 1], amounts[i], rows[i].day) for i in sorted(starts))
    return changes, amounts[-1]  # steady: the next charge is the latest one again


def _runs(amounts: list[int]) -> list[list[int]]:
    """Return the indexes of each run of one same amount, in order."""
    runs: list[list[int]] = []
    for i, a in enumerate(amounts):
        if runs and amounts[runs[-1][-1]] == a:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs
