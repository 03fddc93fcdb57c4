"""Forgiving spelling: a question's misspelt words put right against the words the demo knows.

"how much did i spnd on restarants in septmber" reads as "spend", "restaurants", "september":
each word of four letters or more that the demo does not know is replaced by the known word
closest to it, when one is close enough (difflib's ratio; a common word is never touched).
"""

from __future__ import annotations

import re
from difflib import get_close_matches
from functools import cache, lru_cache

from demo_model import periods, vocabulary
from demo_model.vocabulary import CATEGORY_SYNONYMS

MONTH_NAMES = (
    "january february march april may june july august september october november december"
)
QUESTION_WORDS = (
    "spend spent spending expenses income earned salary budget budgets balance balances "
    "transactions pending merchant merchants category categories subscriptions recurring "
    "refunds purchases average monthly savings compare compared against"
)
# Everyday words of questions that are near a known word ("month" / "monthly").
COMMON = (
    "month months week weeks year years today yesterday much many what when where which "
    "last next past since between before after during until date dates ever went "
    "show list tell give have with from about there their than then that this these those "
    "does doing done make made most more less least some every each also just only over "
    "under into like would could should please thanks thank weather interest rate account "
    "accounts money paid total totals amount amounts much where were your mine spending "
)
CUTOFF = 0.8
WORD = re.compile(r"[a-z]{4,}")


@cache
def targets() -> tuple[str, ...]:
    """The words a misspelling may be put right to: months, topics, the question words."""
    words = set(MONTH_NAMES.split()) | set(QUESTION_WORDS.split())
    for topic, phrases in CATEGORY_SYNONYMS.items():
        words.add(topic)
        words.update(w for p in phrases for w in p.split() if len(w) >= 4)
    return tuple(sorted(words))


@cache
def known() -> frozenset[str]:
    """Words never changed: the targets, everyday words and every word of the demo's patterns."""
    words = set(targets()) | set(COMMON.split())
    for module in (vocabulary, periods):
        for value in vars(module).values():
            if isinstance(value, re.Pattern):
                words.update(WORD.findall(value.pattern))
    return frozenset(words)


def corrected(text: str, names: tuple[str, ...] = ()) -> str:
    """Return folded `text` with each unknown word replaced by its closest target or name."""
    choices = targets() + tuple(n for n in names if len(n) >= 4)
    keep = known()

    def fix(found: re.Match[str]) -> str:
        word = found[0]
        if word in keep or word in choices or (word.endswith("s") and word[:-1] in keep):
            return word
        return closest(word, choices)

    return WORD.sub(fix, text)


@lru_cache(maxsize=8192)
def closest(word: str, choices: tuple[str, ...]) -> str:
    """Return the choice closest to `word` when one is close enough, else `word` (remembered:
    a pasted statement says the same words again and again)."""
    close = get_close_matches(word, choices, n=1, cutoff=CUTOFF)
    return close[0] if close else word


def _plural_of_known(word: str, vocabulary: tuple[str, ...]) -> bool:
    return word.endswith("s") and word[:-1] in vocabulary
