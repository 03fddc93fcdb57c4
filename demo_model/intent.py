"""What a question asks: the kind of answer, period(s) and category or merchant, with follow-ups."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from functools import lru_cache

from demo_model import vocabulary as v
from demo_model.change_requests import read_change
from demo_model.future import days_ahead, future_day
from demo_model.language import language_of
from demo_model.periods import (
    MONTHS,
    Period,
    all_history,
    asks_relative,
    find_periods,
    month_back,
    rolling,
    shift,
    spelled_out,
    without_periods,
)
from demo_model.spelling import corrected

FINANCE_KINDS = (
    "spending",
    "compare",
    "budget",
    "largest",
    "recurring",
    "balances",
    "overview",
    "income",
    "refunds",
    "chart",
    "in_and_out",
    "pending",
    "average",
    "merchants",
    "savings_rate",
    "place",
    "forecast",
    "upcoming",
    "next_payment",
    "price_changes",
    "transfers",
)
# Questions about what lies ahead: read before the words that make a question beyond the demo.
AHEAD_KINDS = (
    "forecast",
    "upcoming",
    "next_payment",
    "price_changes",
    "savings_rate",
    "transfers",
)
# Without a period, these cover all of the user's history (stated in the answer).
WHOLE_HISTORY = (
    "transfers",
    "spending",
    "largest",
    "refunds",
    "income",
    "in_and_out",
    "savings_rate",
    "merchants",
    "average",
    "place",
)
SUBJECT_KINDS = ("spending", "compare", "budget", "largest", "refunds", "next_payment")
REFUND_SUBJECT = re.compile(r"(?P<t>[a-z0-9&'\u2019. -]+?)\s+(?:refunds?|reimbursements?)\b")
CONNECTOR = re.compile(r"\b(vs\.?|versus|compared? (to|with)|against|than)\b")
TERM = re.compile(
    r"\b(?:on|at|for|with|from|to|about)\s+(?P<t>[a-z0-9&'\u2019. -]+?)"
    r"(?=\s+(?:in|during|this|last|over|since|vs|versus|compared|so|than|and|or|past|"
    r"previous|between|before|each|per|month|year|week|today|yesterday)\b|[?!,;:()]|$)"
)
SHORT = 5  # words: "In January?" or "And Amazon?" are follow-ups, a long sentence is not


@dataclass(frozen=True)
class Intent:
    """The answer a question wants: its kind, period(s) and subject."""

    kind: str
    period: Period
    baseline: Period | None = None
    category: str | None = None
    term: str | None = None
    reused: tuple[str, ...] = field(default=())
    language: str = "en"
    details: tuple[tuple[str, str], ...] = ()  # what a change sets: category, amount, id...

    def subject(self) -> str | None:
        """Return how the question names its category or merchant, if it does."""
        return self.category or self.term


@dataclass(frozen=True)
class Parsed:
    """What one question says on its own, before any context from earlier questions."""

    kind: str | None
    before: list[Period]
    after: list[Period]
    relative: bool
    category: str | None
    term: str | None
    whole: bool
    marker: bool
    finance: bool
    words: int
    off_topic: bool
    greeting: bool
    bare: str | None = None  # the leftover word of a short question: "Uber" in "And Uber?"
    beyond: bool = False  # advice, a forecast, an action: nothing the read tools can answer
    language: str = "en"
    change: tuple[str, tuple[tuple[str, str], ...]] | None = None
    text: str = ""  # the question, folded

    def periods(self) -> list[Period]:
        """Return every period named, in order."""
        return self.before + self.after


@lru_cache(maxsize=1024)
def parse(question: str, today: date) -> Parsed:
    """Read one question without context (remembered: every request of a conversation reads
    all its questions again, and a pasted statement makes one long)."""
    q = spelled_out(corrected(v.fold(re.sub(r"\(#\d+\)", " ", question)).strip()))
    cut = CONNECTOR.search(q)
    before = find_periods(q[: cut.start()] if cut else q, today)
    after = find_periods(q[cut.end() :], today) if cut else []
    term = _term(q, today) or _refund_term(q, today)
    # "at Whole Foods" names a merchant even though "food" is a groceries word.
    category = None if term and not v.is_topic_phrase(term) else v.category_in(q)
    term = None if category else term
    words = len(q.split())
    finance = bool(v.FINANCE_WORDS.search(q)) or category is not None
    kind = _kind(q, category, bool(after) or len(before) > 1)
    if kind == "compare" and not (category or term):
        term = _compared_term(q)  # "Amazon this month vs last month": no "at" before it
    if kind == "transfers" and (account := re.search(r"\b(savings|checking|card|pot)\b", q)):
        category, term = None, account[1]  # "moved into my savings account": to savings
    if kind in ("price_changes", "upcoming") and category == "utilities" and not _utility(q):
        category = None  # "which bills went up?": any bill, not only the utilities
    if kind in ("next_payment", "price_changes") and not category:
        # "when is Netflix due?", "has Spotify raised its price?"; "on my recurring payments"
        # names no one series.
        term = _leftover(term) if term else _leftover(q)
    bare = _bare(q) if words <= SHORT and not (category or term or kind) else None
    return Parsed(
        kind=kind,
        before=before,
        after=after,
        relative=asks_relative(q),
        category=category,
        term=term,
        whole=bool(v.WHOLE.search(q)),
        marker=bool(v.FOLLOW_UP_START.search(q)),
        finance=finance,
        words=words,
        off_topic=bool(v.OFF_TOPIC_WORDS.search(q)) and not finance,
        greeting=bool(v.GREETING.search(q) or v.HELP.search(q)) and not finance,
        bare=bare,
        beyond=bool(v.BEYOND.search(q))
        and kind not in AHEAD_KINDS
        and not (kind == "chart" and _balance_ahead(q)),
        language=language_of(question),
        change=read_change(question, today),
        text=q,
    )


def _kind(q: str, category: str | None, two_periods: bool) -> str | None:
    spending = bool(v.SPENDING.search(q))
    if not v.CHART.search(q) and (ahead := _ahead(q)):
        return ahead
    if v.CHART.search(q) and not (v.BUDGET.search(q) or v.BALANCES.search(q)):
        return "chart"
    if v.CHART.search(q) and (v.BALANCES.search(q) or (v.BUDGET.search(q) and category)):
        return "chart"  # a budget's progress, an account's balance over time
    if v.COMPARE.search(q) and spending and v.OVER_SEVERAL.search(q):
        return "chart"
    if v.SAVINGS_RATE.search(q):
        return "savings_rate"
    if v.IN_AND_OUT.search(q):
        return "in_and_out"
    if v.AVERAGE.search(q) and not v.BUDGET.search(q):
        return "average"
    if v.TOP_MERCHANT.search(q) and not v.BUDGET.search(q):
        return "merchants"
    if v.PENDING.search(q) and not v.BUDGET.search(q):
        return "pending"
    if v.REFUNDS.search(q):
        return "refunds"
    if v.INCOME.search(q):
        return "income"
    if v.BUDGET.search(q):
        return "budget"
    if re.search(r"\b(vs\.?|versus|compared? (to|with)|compare)\b", q) or two_periods:
        return "compare"
    if v.RECURRING.search(q) and not (spending and category == "subscriptions"):
        return "recurring"
    if v.LARGEST.search(q):
        # "my biggest expense category": the spending answer ranks categories
        return "spending" if re.search(r"\bcategor(y|ies)\b", q) else "largest"
    if spending:
        return "spending"
    if v.BALANCES.search(q):
        return "balances"
    if v.OVERVIEW.search(q):
        return "overview"
    return None


def _balance_ahead(q: str) -> bool:
    """Whether a question asks about a balance ahead: "what will my balance be on 1 May?"."""
    # Whether a day is named at all (any reference day tells that).
    looks_ahead = v.AHEAD.search(q) or future_day(q, date(2000, 1, 1)) is not None
    return bool(v.HOLDINGS.search(q) and looks_ahead and not v.PAST.search(q))


def _ahead(q: str) -> str | None:
    """Return the kind of a question about a balance ahead, payments due or prices, if it is."""
    if v.SAVED.search(q):
        return "savings_rate"
    if v.TRANSFERS.search(q) and not v.ORDER.search(q):
        return "transfers"
    if _balance_ahead(q):
        return "forecast"
    if v.UPCOMING.search(q) and not v.NEXT_PAYMENT.search(q):
        return "upcoming"
    if v.NEXT_PAYMENT.search(q):
        return "next_payment"
    if v.PRICE_CHANGE.search(q) and v.PRICED.search(q):
        return "price_changes"
    return None


def _term(q: str, today: date) -> str | None:
    for m in TERM.finditer(q):
        if found := _clean_term(m["t"], today):
            return found
    return None


def _refund_term(q: str, today: date) -> str | None:
    """Return the subject named before "refunds": "Amazon" in "show my Amazon refunds"."""
    found = REFUND_SUBJECT.search(q)
    return _clean_term(found["t"], today) if found else None


def _bare(q: str) -> str | None:
    words = re.findall(r"[a-z0-9&'\u2019.-]+", q)
    kept = [
        w
        for w in (w.strip(".-") for w in words)
        if w not in v.NOT_A_SUBJECT and w not in MONTHS and not w.isdigit()
    ]
    term = " ".join(kept)
    return term if len(term) >= 3 else None


def _compared_term(q: str) -> str | None:
    """Return what a comparison names besides its periods and comparing words, if anything."""
    words = (w.strip(".-") for w in re.findall(r"[a-z0-9&.-]+", without_periods(q)))
    kept = [w for w in words if w and w not in v.COMPARING and w not in MONTHS and not w.isdigit()]
    term = " ".join(kept)
    return term if len(term) >= 3 else None


def _utility(q: str) -> bool:
    """Whether a question names a utility itself, not just "bills"."""
    words = [p for p in v.CATEGORY_SYNONYMS["utilities"] if p not in ("bill", "utility")]
    return any(v.contains_phrase(v.tokens(q), p) for p in words) or "utilit" in q


def _leftover(q: str) -> str | None:
    """Return what a question about a series names besides its own words: "netflix"."""
    words = (w.strip(".-") for w in re.findall(r"[a-z0-9&.-]+", without_periods(q)))
    kept = [
        w
        for w in words
        if w
        and w not in v.NOT_A_SUBJECT
        and w not in v.AHEAD_WORDS
        and w not in MONTHS
        and not w.isdigit()
    ]
    term = " ".join(kept)
    return term if len(term) >= 3 else None


def _clean_term(text: str, today: date) -> str | None:
    words = [w.strip(".\u2019'-") for w in text.split()]
    while words and words[0] in v.NOT_A_SUBJECT:
        words.pop(0)
    term = " ".join(w for w in words if w)
    if len(term) < 3 or all(w in v.NOT_A_SUBJECT for w in words) or find_periods(term, today):
        return None
    return term


def resolve(questions: list[str], today: date) -> Intent:
    """Return the intent of the last question, using earlier ones as its context."""
    context: Intent | None = None
    intent = Intent("help", month_back(today, 0))
    for question in questions:
        intent = _intent(parse(question, today), context, today)
        if intent.kind in FINANCE_KINDS:
            context = intent
    return intent


def _intent(p: Parsed, prev: Intent | None, today: date) -> Intent:
    this_month = month_back(today, 0)
    if p.language != "en":
        return Intent("foreign", this_month, language=p.language)
    if p.change:
        return Intent(p.change[0], this_month, details=p.change[1])
    if p.beyond:
        return Intent("unknown", this_month)
    if p.kind == "chart":
        return _chart(p, p.text, today)
    place = v.PLACE.search(p.text)
    if place is not None:
        periods = p.periods()
        period = periods[0] if periods else all_history(today)
        return Intent("place", period, details=(("place", place.group(1)),))
    if p.bare and (p.periods() or (prev is not None and p.marker)):
        p = replace(p, term=p.bare)  # "coffee this month?", "and Uber?"
    subject = p.category or p.term
    content = bool(subject or p.periods() or p.relative or p.whole)
    if (p.off_topic and p.kind is None and not p.category) or (p.greeting and not content):
        return Intent("off_topic" if p.off_topic else "help", this_month)
    short = p.words <= SHORT
    # A merchant-like word ("about cats") only counts in a finance question or a follow-up.
    named = bool(p.category or (p.term and (p.finance or p.marker or p.periods())))
    bare = p.kind is None and (named or short or p.finance)
    if prev is not None and content and (p.marker or p.relative or bare):
        return _follow_up(p, prev, today)
    if p.kind is not None:
        return _fresh(p, p.kind, today)
    if named or (p.periods() and short):
        return _fresh(p, "spending", today)
    return Intent("unknown" if p.finance else "off_topic", this_month)


def _chart(p: Parsed, q: str, today: date) -> Intent:
    """A chart: by category over one period, else by month over several (six by default)."""
    periods = p.periods()
    if v.BUDGET.search(q) and p.category:
        period = periods[0] if periods else month_back(today, 0)
        return Intent("chart", period, None, p.category, details=(("chart", "budget_progress"),))
    if v.BALANCES.search(q) and _balance_ahead(q):
        day, _ = future_day(q, today) or (today + timedelta(days=90), "")
        period = Period(
            today - timedelta(days=91), max(day, today + timedelta(days=1)), "", "ahead"
        )
        return Intent("chart", period, details=(("chart", "balance_forecast"), ("words", q)))
    if v.BALANCES.search(q):
        period = periods[0] if periods else rolling(today, 6, "month")
        return Intent("chart", period, details=(("chart", "account_balance"), ("words", q)))
    if v.IN_AND_OUT.search(q) or (v.INCOME.search(q) and v.SPENDING.search(q)):
        drawn = "income_vs_spending"
    elif v.SHARE.search(q):
        drawn = "category_share"
    elif v.STACKED.search(q):
        drawn = "category_by_month"
    elif v.BY_CATEGORY.search(q):
        drawn = "spending_by_category"
    else:
        drawn = "spending_by_month"
    several = ("year", "quarter", "rolling")
    if drawn != "spending_by_month" and len(periods) == 1:
        period = periods[0]  # income against spending in one month: two bars
    elif drawn in ("spending_by_category", "category_share"):
        period = month_back(today, 0)
    elif (periods and periods[0].unit in several) or len(periods) > 1:
        period = (
            periods[0]
            if len(periods) == 1
            else replace(
                periods[0], start=min(x.start for x in periods), end=max(x.end for x in periods)
            )
        )
    else:
        period = rolling(today, 6, "month")
    category = p.category if drawn == "spending_by_month" else None
    return Intent("chart", period, None, category, None, details=(("chart", drawn),))


def _fresh(p: Parsed, kind: str, today: date) -> Intent:
    periods = p.periods()
    if p.relative and not periods:
        periods = [month_back(today, 1)]
    if kind in ("forecast", "upcoming", "next_payment", "price_changes"):
        return _looking_ahead(p, kind, today)
    if kind in WHOLE_HISTORY and not periods:
        # No period named: all of the history, never silently this month (the answer says so).
        return Intent(kind, all_history(today), None, p.category, p.term)
    if kind == "recurring" and "subscription" in p.text:
        # Subscriptions are the recurring payments of a subscription category: rent apart.
        only = (("only", "subscriptions"),)
        return Intent(kind, month_back(today, 0), None, p.category, p.term, details=only)
    if kind != "compare":
        period = periods[0] if periods else month_back(today, 0)
        return Intent(kind, period, None, p.category, p.term)
    period, baseline = _compared(p, today)
    return Intent(kind, period, baseline, p.category, p.term)


def _looking_ahead(p: Parsed, kind: str, today: date) -> Intent:
    """A balance on a day ahead, the payments due soon, a series' next payment, price moves."""
    if kind == "forecast":
        found = future_day(p.text, today)
        if found is None:  # "will I have enough?": by the end of this month
            end = (today.replace(day=28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)
            found = (end, f"the end of {end:%B %Y}")
        day, said = found
        period = Period(today, max(day, today), said, "ahead")
        return Intent(kind, period, details=(("date", period.end.isoformat()),))
    if kind == "upcoming":
        days, said = days_ahead(p.text, today) or (30, "the next 30 days")
        period = Period(today, today + timedelta(days=days - 1), said, "ahead")
        return Intent(kind, period, details=(("days", str(days)),))
    paid = (("income", "yes"),) if v.GETTING_PAID.search(p.text) else ()
    return Intent(kind, month_back(today, 0), None, p.category, p.term, details=paid)


def _compared(p: Parsed, today: date) -> tuple[Period, Period]:
    """Return (period, baseline): the baseline is the earlier one, or the one after "than"."""
    if p.before and p.after:
        return p.before[0], p.after[0]
    if p.after:
        later = shift(p.after[0], 1, today)
        if later.start > today:  # "X vs this year": nothing after it yet, so it is the period
            return p.after[0], shift(p.after[0], -1, today)
        return later, p.after[0]
    if len(p.before) >= 2:
        first, second = sorted(p.before[:2], key=lambda x: x.start)
        return second, first
    period = p.before[0] if p.before else month_back(today, 0)
    return period, shift(period, -1, today)


def _follow_up(p: Parsed, prev: Intent, today: date) -> Intent:
    subject = p.category or p.term
    reused: list[str] = []
    kind = p.kind
    if kind is None:
        kind = prev.kind if prev.kind in SUBJECT_KINDS or not subject else "spending"
        reused.append("kind")
    if subject:
        category, term = p.category, p.term
    elif p.whole or kind != prev.kind:
        category, term = None, None
    else:
        category, term = prev.category, prev.term
        if prev.subject():
            reused.append("subject")
    periods = p.periods()
    if kind == "compare":
        if periods:
            period, baseline = _compared(p, today)
        elif p.relative and prev.baseline is not None:
            period, baseline = shift(prev.period, -1, today), shift(prev.baseline, -1, today)
        elif p.relative:
            period = shift(prev.period, -1, today)
            baseline = shift(period, -1, today)
        else:
            period = prev.period
            baseline = prev.baseline or shift(prev.period, -1, today)
            reused.append("period")
        return Intent(kind, period, baseline, category, term, tuple(reused))
    if periods:
        period = periods[0]
    elif p.relative:
        period = shift(prev.period, -1, today)
        reused.append("period, one step back")
    else:
        period = prev.period
        reused.append("period")
    return Intent(kind, period, None, category, term, tuple(reused))
