"""A labelled synthetic ledger for recurring-series detection: 18 months, two currencies, noise.

Every row carries its truth: the name of the recurring series it belongs to, or None. The
series come weekly to yearly, money out and in, with the noise real statements have: skipped
months, amount drift, a price change, payments moved off weekends, merchant names spelled
several ways. Around them: groceries, coffee, restaurants, rides and online shopping at random
(some of it at the same merchants as a subscription), refunds, cash, and transfers between
the user's own accounts (a monthly move to savings, the card's monthly payment).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, timedelta

from tools.finance.clock import add_months, days_in_month

END = date(2026, 6, 30)
START = date(2025, 1, 1)
CURRENT, SAVINGS, CARD, KONTO = "Current", "Savings", "Credit Card", "Konto"
ACCOUNTS = [
    (CURRENT, "checking", "GBP", 250_000),
    (SAVINGS, "savings", "GBP", 1_000_000),
    (CARD, "credit_card", "GBP", -40_000),
    (KONTO, "checking", "EUR", 180_000),
]
CURRENCY = {name: cur for name, _, cur, _ in ACCOUNTS}


@dataclass(frozen=True)
class Synth:
    """One generated row and its truth: the series it belongs to (None: not recurring)."""

    day: date
    account: str
    amount: int
    merchant: str
    series: str | None = None
    transfer: bool = False

    @property
    def currency(self) -> str:
        """The row's currency: its account's."""
        return CURRENCY[self.account]


def weekday(day: date, back: bool = False) -> date:
    """Move a Saturday or Sunday to the Monday after (or the Friday before)."""
    while day.weekday() >= 5:
        day += timedelta(days=-1 if back else 1)
    return day


def months(day: int) -> Iterator[date]:
    """Each month's `day` (clamped to the month's length) from START to END."""
    month = START
    while month <= END:
        yield month.replace(day=min(day, days_in_month(month.year, month.month)))
        month = add_months(month, 1)


def ledger(seed: int = 38) -> list[Synth]:
    """Return the rows, oldest first; the same seed gives the same rows."""
    rng = random.Random(seed)
    rows: list[Synth] = []
    rows += _monthly(rng)
    rows += _other_cadences(rng)
    rows += _noise(rng)
    rows += _transfers(rng)
    return sorted(
        (r for r in rows if START <= r.day <= END),
        key=lambda r: (r.day, r.account, r.merchant, r.amount),
    )


def _spell(rng: random.Random, names: list[str]) -> str:
    return names[0] if rng.random() < 0.5 else rng.choice(names)


def _monthly(rng: random.Random) -> list[Synth]:
    out: list[Synth] = []
    for i, day in enumerate(months(1)):
        rent = ["Parkside Lettings", "PARKSIDE LETTINGS LTD", "Parkside Lettings Ref 0104"]
        out.append(Synth(weekday(day), CURRENT, -145_000, _spell(rng, rent), "rent"))
        pay = 320_000 if i < 9 else 335_000  # a raise in the tenth month
        payroll = ["Northwind Payroll", "NORTHWIND LTD PAYROLL", "Northwind Payroll 2504"]
        out.append(
            Synth(
                weekday(day.replace(day=25), back=True),
                CURRENT,
                pay,
                _spell(rng, payroll),
                "salary",
            )
        )
        netflix = ["NETFLIX.COM", "Netflix", "NETFLIX *8812"]
        price = -1099 if i < 8 else -1299  # up from the ninth month
        out.append(Synth(day.replace(day=5), CARD, price, _spell(rng, netflix), "netflix"))
        if i != 6:  # one month skipped
            spotify = ["Spotify", "SPOTIFY P1A2B3", "Spotify UK"]
            out.append(Synth(day.replace(day=12), CARD, -1199, _spell(rng, spotify), "spotify"))
        energy = ["Octopus Energy", "OCTOPUS ENERGY LTD", "Octopus Energy DD"]
        when = day.replace(day=14) + timedelta(days=rng.randint(-2, 2))
        out.append(Synth(when, CURRENT, -rng.randint(5_500, 9_500), _spell(rng, energy), "energy"))
        phone = ["Vodafone", "VODAFONE LIMITED", "Vodafone UK"]
        out.append(
            Synth(day.replace(day=18), CURRENT, -(2_400 + 10 * i), _spell(rng, phone), "phone")
        )
        gym = ["Fitnessstudio Berlin", "FITNESSSTUDIO BERLIN GMBH"]
        out.append(Synth(day.replace(day=3), KONTO, -3_990, _spell(rng, gym), "fitness_eur"))
        power = ["Vattenfall", "VATTENFALL EUROPE SALES"]
        when = day.replace(day=20) + timedelta(days=rng.randint(-1, 1))
        out.append(Synth(when, KONTO, -rng.randint(4_200, 6_800), _spell(rng, power), "power_eur"))
    return out


def _other_cadences(rng: random.Random) -> list[Synth]:
    out: list[Synth] = []
    monday = START + timedelta(days=(7 - START.weekday()) % 7)
    skipped = {9, 10, 40}
    week = 0
    while monday <= END:
        if week not in skipped:
            name = _spell(rng, ["PureGym", "PUREGYM LTD", "Puregym 4471"])
            out.append(Synth(monday, CARD, -850, name, "gym"))
        monday += timedelta(days=7)
        week += 1
    friday = date(2025, 1, 10)
    while friday <= END:
        amount = rng.randint(38_000, 42_000)
        out.append(
            Synth(friday, CURRENT, amount, _spell(rng, ["Upwork Escrow", "UPWORK"]), "freelance")
        )
        friday += timedelta(days=14)
    for i, day in enumerate(months(8)):
        if i % 3 == 1:
            water = ["Thames Water", "THAMES WATER UTILITIES"]
            out.append(
                Synth(
                    day, CURRENT, -rng.choice([9_800, 10_100, 9_950]), _spell(rng, water), "water"
                )
            )
    out.append(Synth(date(2025, 2, 17), CURRENT, -48_000, "Admiral Insurance", "insurance"))
    out.append(Synth(date(2026, 2, 17), CURRENT, -48_000, "ADMIRAL INSURANCE", "insurance"))
    out.append(Synth(date(2025, 5, 9), CARD, -9_500, "Amazon Prime", "prime"))
    out.append(Synth(date(2026, 5, 9), CARD, -9_500, "AMAZON PRIME", "prime"))
    out.append(Synth(date(2025, 3, 2), KONTO, -24_400, "BahnCard 50", "bahncard"))
    out.append(Synth(date(2026, 3, 2), KONTO, -24_400, "BAHNCARD 50", "bahncard"))
    return out


def _every(rng: random.Random, chance: float, make: Callable[[date], Synth]) -> list[Synth]:
    out, day = [], START
    while day <= END:
        if rng.random() < chance:
            out.append(make(day))
        day += timedelta(days=1)
    return out


def _noise(rng: random.Random) -> list[Synth]:
    """Spending with no cadence: some of it at the merchants of a series, and refunds."""
    grocers = ["TESCO STORES 3297", "Tesco", "Sainsbury's", "SAINSBURYS S/MKT", "Lidl GB"]
    places = ["Dishoom", "Wagamama", "Franco Manca", "The Crown", "Pho", "Honest Burgers"]
    out = _every(
        rng, 0.3, lambda d: Synth(d, CARD, -rng.randint(1_500, 11_000), rng.choice(grocers))
    )
    out += _every(rng, 0.45, lambda d: Synth(d, CARD, -rng.randint(250, 600), "Pret A Manger"))
    out += _every(
        rng, 0.25, lambda d: Synth(d, CARD, -rng.randint(1_200, 7_500), rng.choice(places))
    )
    out += _every(rng, 0.12, lambda d: Synth(d, CARD, -rng.randint(700, 3_400), "Uber"))
    shop = ["Amazon.co.uk", "AMAZON MKTPLACE", "Amazon.co.uk*AB12CD"]
    bought = _every(
        rng, 0.12, lambda d: Synth(d, CARD, -rng.randint(800, 15_000), rng.choice(shop))
    )
    out += bought
    for r in bought[::9]:  # a few go back, refunded a week later
        out.append(Synth(r.day + timedelta(days=7), CARD, -r.amount, r.merchant))
    out += _every(
        rng,
        0.05,
        lambda d: Synth(d, CURRENT, -rng.choice([2_000, 5_000, 10_000]), "ATM Withdrawal"),
    )
    out += _every(
        rng,
        0.08,
        lambda d: Synth(
            d, KONTO, -rng.randint(900, 6_000), rng.choice(["REWE", "Edeka", "Rossmann"])
        ),
    )
    out += _every(rng, 0.1, lambda d: Synth(d, KONTO, -rng.randint(300, 900), "Spotify Cafe Mitte"))
    out.append(Synth(date(2025, 6, 14), CURRENT, 12_000, "J Smith"))
    out.append(Synth(date(2025, 11, 2), CURRENT, 4_500, "J Smith"))
    out.append(Synth(date(2025, 9, 20), CARD, -89_900, "IKEA"))
    out.append(Synth(date(2026, 1, 3), CURRENT, -34_999, "Currys"))
    return out


def _transfers(rng: random.Random) -> list[Synth]:
    """A monthly move to savings and the card's monthly payment: both legs, never spending."""
    out: list[Synth] = []
    for day in months(27):
        out.append(Synth(day, CURRENT, -50_000, "To Savings", transfer=True))
        out.append(Synth(day + timedelta(days=1), SAVINGS, 50_000, "From Current", transfer=True))
        paid = rng.randint(60_000, 140_000)
        pay_day = day.replace(day=7)
        out.append(Synth(pay_day, CURRENT, -paid, "CREDIT CARD PAYMENT", transfer=True))
        out.append(
            Synth(pay_day + timedelta(days=2), CARD, paid, "PAYMENT RECEIVED", transfer=True)
        )
    return out


def truth(rows: list[Synth]) -> set[str]:
    """Return the names of the true recurring series (transfers are never a series of money)."""
    return {r.series for r in rows if r.series}
