"""Words the demo model understands: category synonyms, question keywords, forgiving matching."""

from __future__ import annotations

import re
import unicodedata

# Canonical topic -> phrases that name it. A user's own category matches a topic when its name
# contains one of these phrases, so "Dining" or "Eating Out" both answer "restaurants".
CATEGORY_SYNONYMS: dict[str, tuple[str, ...]] = {
    "groceries": (
        "grocery",
        "groceries",
        "grocer",
        "supermarket",
        "food",
        "food shopping",
        "food shop",
    ),
    "restaurants": (
        "restaurant",
        "dining",
        "dining out",
        "eating out",
        "eat out",
        "takeaway",
        "takeout",
        "take out",
        "food delivery",
        "fast food",
        "lunch",
        "dinner",
        "brunch",
        "cafe",
        "bar",
    ),
    "transport": (
        "transport",
        "transportation",
        "commute",
        "commuting",
        "transit",
        "taxi",
        "cab",
        "rideshare",
        "ride",
        "fuel",
        "petrol",
        "parking",
        "car",
    ),
    "utilities": (
        "utility",
        "utilities",
        "electricity",
        "electric",
        "energy",
        "internet",
        "broadband",
        "phone",
        "water",
        "bill",
    ),
    "subscriptions": ("subscription", "streaming", "membership"),
    "rent": ("rent", "housing", "mortgage", "landlord"),
    "fitness": ("fitness", "gym", "workout", "sport", "exercise"),
    "shopping": ("shopping", "shop", "clothes", "clothing", "online shopping", "retail"),
    "travel": (
        "travel",
        "trip",
        "flight",
        "airfare",
        "airline",
        "hotel",
        "vacation",
        "holiday",
        "abroad",
    ),
    "health": ("health", "healthcare", "medical", "pharmacy", "doctor", "dentist"),
    "entertainment": ("entertainment", "movie", "cinema", "concert", "game", "fun"),
}

# Words that say the question is about the user's money at all.
FINANCE_WORDS = re.compile(
    r"\b(spen[dt]|spending|expenses?|costs?|paid|pay(ing|ments?)?|bought|buy|purchases?|"
    r"charged?|charges|money|budgets?|balances?|accounts?|subscriptions?|recurring|"
    r"transactions?|refunds?|finances?|financial|savings?|saved|income|earn(ed)?|bills?|"
    r"cash|afford|overview|summary|categor(y|ies)|merchants?|compare|how am i doing)\b"
)
# Clearly not finance, even when a stray finance-ish word appears.
OFF_TOPIC_WORDS = re.compile(
    r"\b(weather|poem|poetry|joke|story|recipe|song|lyrics|news|translate|capital of|"
    r"president|football|movie review|code|program|essay|haiku|rain|sunny|forecast)\b"
)
GREETING = re.compile(
    r"^\s*(hi|hello|hey|hiya|good (morning|afternoon|evening)|thanks|thank you)\b"
)
HELP = re.compile(r"\b(help|what can you do|who are you|what are you)\b")

FOLLOW_UP_START = re.compile(
    r"^\s*(and|what about|how about|what of|same for|same but|now|also|ok(ay)?|then|but)\b"
)

SPENDING = re.compile(
    r"\b(spen[dt]|spending|expenses?|costs?|paid|pay|bought|purchases?|charged|"
    r"money go(es)?|go(ne)? on)\b"
)
BUDGET = re.compile(r"\b(budget(s|ed|ing)?|over ?spen[dt]|overspending|on track)\b")
RECURRING = re.compile(
    r"\b(recurring|subscriptions?|standing orders?|direct debits?|regular payments?|"
    r"repeating)\b"
)
COMPARE = re.compile(
    r"\b(vs\.?|versus|compared? (to|with)|compare|against|more than|less than|than)\b"
)
# A place the user names: the records carry no city or country, so it cannot be answered.
PLACE = re.compile(
    r"\b(?:spen[dt]|spending|paid|pay|bought|buy)\b.*\b(?:in|at) (paris|london|berlin|rome|"
    r"madrid|lisbon|amsterdam|vienna|prague|new york|tokyo|france|germany|italy|spain|portugal|"
    r"japan|europe|england|the uk)\b"
)
# "compare my spending in the last three months": several periods side by side, a chart.
OVER_SEVERAL = re.compile(
    r"\b(last|past|previous) (two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d+) "
    r"(months|quarters|years)\b"
)
LARGEST = re.compile(
    r"\b(biggest|largest|most expensive|highest|top)\b.*\b(purchases?|transactions?|"
    r"expenses?|charges?|payments?|spends?)\b"
)
BALANCES = re.compile(
    r"\b(balances?|accounts?|net worth|how much (money )?(do|have) i (have|got)|"
    r"how much is in|cash)\b"
)
OVERVIEW = re.compile(
    r"\b(how am i doing|overview|summary|my finances|financial (situation|health|picture)|"
    r"snapshot|big picture)\b"
)
INCOME = re.compile(
    r"\b(income|incomes|earn(ed|ings?|t)?|salary|salaries|wages?|pay ?checks?|payslips?|"
    r"(get|got|been|was|were|am|i) paid|paid me|came in|come in)\b"
)
SAVINGS_RATE = re.compile(
    r"\b(savings? rate|rate of saving|share of (my )?income (i )?(kept|saved)|"
    r"(percent(age)?|share|proportion|how much|fraction) of my (income|salary|pay) "
    r"(did |have |do )?i (save|saved|keep|kept|put aside))\b"
)
AVERAGE = re.compile(
    r"\b(average|averages|avg|on average|typical month|usually|normally|typically)\b"
)
TOP_MERCHANT = re.compile(
    r"\b(which|what|top|biggest|largest|most)\b.*\b(merchants?|stores?|shops?|places?|retailers?)\b"
    r"|\b(merchants?|stores?|shops?)\b.*\bmost\b"
    r"|\bwhere (do|did) i (spend|shop|spent) (the )?most\b|\bwho (do|did) i pay (the )?most\b"
)
PENDING = re.compile(r"\b(pending|not (yet )?posted|uncleared|still processing)\b")
CHART = re.compile(r"\b(charts?|chart it|plot(ted)?|graphs?|trends?|over time|visuali[sz]e)\b")
BY_CATEGORY = re.compile(r"\b(by|per|each|every) categor(y|ies)\b|\bcategories\b")
# A chart's shape: each category's share as a ring, or each month stacked by category.
SHARE = re.compile(r"\b(donut|doughnut|pie|ring)\b|\bshares?\b.*\bcategor(y|ies)\b")
STACKED = re.compile(r"\bstack(ed|s)?\b|\bcategor(y|ies)\b.*\b(each|every|per|by) month\b")
IN_AND_OUT = re.compile(
    r"\b(money in (vs\.?|versus|and|against) (money )?out|in (vs\.?|versus|and) out|"
    r"income (vs\.?|versus|and|against) (spending|expenses|outgoings|spend)|"
    r"(earned|earn|earnings) (vs\.?|versus|and|against) (spent|spend|spending)|"
    r"cash ?flow|inflows? (vs\.?|versus|and) outflows?|came in (vs\.?|versus|and) went out|"
    r"(earn|earned|made|make) and (spend|spent)|"
    r"(come|came|comes|coming) in and (go|goes|went|going) out)\b"
)
REFUNDS = re.compile(r"\b(refunds?|refunded|reimburse(d|ments?)?|money back|(get|got) back)\b")
# Finance questions the demo cannot answer from the read tools: advice, forecasts of anything
# but a balance, actions and figures no tool returns. They get "I did not understand", never an
# answer to another question. (A balance ahead, the bills ahead and the next payment of a
# series are read first: FORECAST, UPCOMING, NEXT_PAYMENT.)
BEYOND = re.compile(
    r"\b(afford|invest(ed|ing|ments?)?|stocks?|shares|crypto|bitcoin|credit score|tax(es)?|"
    r"interest rates?|apr|loans?|debts?|retire(ment)?|predict(ion)?|forecast|projections?|"
    r"next (week|month|quarter|year)|will i|am i going to|should i|cancel|transfer|send money|"
    r"pay off|save|saved|advice|advise|recommend)\b"
)
# What the user holds, and words that look ahead: together, a balance forecast.
HOLDINGS = re.compile(
    r"\b(balances?|accounts?|money|cash|funds|in the bank|net worth|(have|be) left|"
    r"(will|would) i have|overdrawn|in the red|in overdraft)\b"
)
AHEAD = re.compile(
    r"\b(will|would|going to|gonna|expect(ed)?|forecast(ed)?|project(ed|ion|ions)?|"
    r"predict(ed|ion)?|look like (on|by|at|in)|be on|be by)\b"
)
PAST = re.compile(r"\b(was|were|did|had|used to)\b")
# The payments expected soon: "upcoming bills", "what's due this week", "bills coming up".
UPCOMING = re.compile(
    r"\b(upcoming|coming up|coming out|due (soon|this|next|in)|falling due|scheduled|"
    r"(bills|payments|charges|debits|subscriptions) (due|ahead|to come|expected)|"
    r"what (bills|payments|charges) (are|do i have|will)|expected (bills|payments|charges)|"
    r"(have|need|got) to pay)\b"
)
# When a recurring payment comes next: "when is my next rent?", "when do I get paid?".
NEXT_PAYMENT = re.compile(
    r"\b(whens?|what day|which day|what date)\b.*\b(next|due|paid|charged?|charges|come|"
    r"comes|coming|arrive|arrives|hit|hits|go out|goes out|leave|leaves|renew|renews)\b|"
    r"\bnext (rent|salary|payday|paycheck|pay ?check|pay|payment|bill|charge|direct debit|"
    r"renewal|\w+ (payment|charge|bill|renewal))\b|\bpay ?day\b"
)
GETTING_PAID = re.compile(
    r"\b(get paid|getting paid|paid next|salary|payday|pay ?day|pay ?checks?|wages?|income|"
    r"paid me)\b"
)
# A price that moved: "what went up in price?", "which subscriptions got more expensive?".
PRICE_CHANGE = re.compile(
    r"\b(went up|gone up|go up|going up|increased?|increases|raised?|raises|hiked?|hikes|"
    r"more expensive|pricier|dearer|cost(s|ing)? more|changed|change|changes|went down|"
    r"gone down|cheaper|decreased?|drop(ped)?|rise|rose|risen)\b"
)
PRICED = re.compile(
    r"\b(prices?|pricier|priced|pricing|expensive|dearer|cheaper|subscriptions?|bills?|"
    r"recurring|memberships?|plans?|fees?|tariffs?)\b"
)
# "How much did I save?": what income left after spending.
# Money moved between the user's own accounts, asked about (not asked to be moved).
TRANSFERS = re.compile(
    r"\b(how much|what|which|show|list|any|did i|have i|total)\b.*\b(transfer(s|red)?|"
    r"moved?|put|sent)\b.*\b(to|into|from|between|in)\b.*\b(savings?|accounts?|checking|"
    r"card|pot)\b|\b(my|the) transfers\b|\btransfers between\b"
)
ORDER = re.compile(r"^\s*(please )?(transfer|send|move|pay)\b")
SAVED = re.compile(r"\bhow much (money )?(did|have|had) i (saved?|put aside|kept)\b|\bdid i save\b")
# Categories that move money between the user's own accounts: not income, not refunds.
TRANSFER_NAMES = ("transfer", "internal", "card payment", "credit card payment")
WHOLE = re.compile(r"\b(in total|overall|altogether|all categories|everything|total)\b")

# The words of questions about a series' next payment or price, never what they name.
_AHEAD = (
    "when whens day date due next paid pay payday paycheck check charge charged charges come "
    "comes coming arrive arrives hit hits go goes out leave leaves renew renews renewal its "
    "their went gone up increase increased increases raise raised raises hike hiked more "
    "expensive pricier dearer price prices cost costs changed change changes cheaper down "
    "decreased rise rose risen drop dropped bill bills subscription subscriptions recurring "
    "membership plan fee fees has have will be get salary wages income direct debit there been "
    "ever any had gotten got become became"
)
AHEAD_WORDS = frozenset(_AHEAD.split())

# Words a captured subject may not be: periods, pronouns, filler and the question's own verbs.
_FILLER = (
    "a an the my our me i it this that these those them you your all each every average "
    "total everything anything something things money spending spend spent expenses what "
    "which how much many month months year years week weeks day days today yesterday so far "
    "last this next previous past before after average per and or vs versus compared budget "
    "budgets account accounts balance balances category categories merchant merchants "
    "about in on at for since during over with from to is was quarter quarters now also then "
    "but ok okay same did do does im ytd mtd show list give get got any were are have has had "
    "received receive track transaction transactions purchase purchases payment payments charges"
)
NOT_A_SUBJECT = frozenset(_FILLER.split())
# The words a comparison asks with, never what it compares: "did my spending go up vs...".
_COMPARING = (
    "compare comparing comparison than against between more less go goes went up down higher "
    "lower increase increased decrease decreased rise rose fall fell drop dropped grow grew "
    "change changed changes difference different differ like look looks looking been where "
    "versus one period periods time"
)
COMPARING = NOT_A_SUBJECT | frozenset(_COMPARING.split())


def tokens(text: str) -> list[str]:
    """Return lowercase singular word tokens, ignoring accents, apostrophes and punctuation."""
    return [_singular(w) for w in re.findall(r"[a-z0-9&]+", fold(text))]


def fold(text: str) -> str:
    """Return `text` lowercased without accents or apostrophes: "Hôtel Joe's" -> "hotel joes"."""
    plain = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in plain if not unicodedata.combining(ch) and ch not in "'\u2019")


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us")):
        return word[:-1]
    return word


def contains_phrase(text_tokens: list[str], phrase: str) -> bool:
    """Return whether the words of `phrase` appear in a row in `text_tokens`."""
    words = tokens(phrase)
    n = len(words)
    return n > 0 and any(text_tokens[i : i + n] == words for i in range(len(text_tokens) - n + 1))


def is_topic_phrase(text: str) -> bool:
    """Return whether `text` is exactly a topic word, like "eating out" (not "whole foods")."""
    words = tokens(text)
    return any(
        words == tokens(phrase) or words == tokens(topic)
        for topic, phrases in CATEGORY_SYNONYMS.items()
        for phrase in phrases
    )


def is_topic_words(text: str) -> bool:
    """Return whether every word of `text` is a topic word or filler: "my trip abroad"."""
    topic_words = {w for phrases in CATEGORY_SYNONYMS.values() for p in phrases for w in tokens(p)}
    words = [w for w in tokens(text) if w not in NOT_A_SUBJECT]
    return bool(words) and all(w in topic_words for w in words)


def category_in(question: str) -> str | None:
    """Return the canonical topic a question names, preferring the longest matching phrase."""
    words = tokens(question)
    found = [
        (len(tokens(phrase)), topic)
        for topic, phrases in CATEGORY_SYNONYMS.items()
        for phrase in phrases
        if contains_phrase(words, phrase)
    ]
    return max(found)[1] if found else None


def names_topic(name: str, topic: str) -> bool:
    """Return whether a user's category `name` is the canonical `topic` under another name."""
    words = tokens(name)
    return contains_phrase(words, topic) or any(
        contains_phrase(words, p) for p in CATEGORY_SYNONYMS.get(topic, ())
    )


def is_transfer(name: str) -> bool:
    """Return whether a category moves money between the user's own accounts."""
    words = tokens(name)
    return any(contains_phrase(words, phrase) for phrase in TRANSFER_NAMES)


def names_term(name: str, term: str) -> bool:
    """Return whether a category or merchant `name` is what the user called `term`."""
    name_words, term_words = tokens(name), tokens(term)
    if not name_words or not term_words:
        return False
    if contains_phrase(name_words, term) or contains_phrase(term_words, name):
        return True
    # "traderjoes" vs "Trader Joe's": compare with the spaces taken out, from a word start.
    joined = "".join(term_words)
    return any("".join(name_words[i:]).startswith(joined) for i in range(len(name_words)))
