"""The demo model cites like Claude: each figure's sentence cites the rows that add up to it.

Over the corpus questions and the seeded demo year: every citation points at the search result
the request numbers so (its source, title and text), every cited source resolves for the asking
user and not for another one, and the rows behind a cited sentence add up to the one amount it
states. Honest answers cite nothing.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from decimal import Decimal
from typing import Any

import pytest

from demo_data import seed_finance
from demo_model import tool_calls as calls
from demo_model.answers.money_in import refunds
from demo_model.brain import respond
from demo_model.cite import Cite, SearchResults
from demo_model.intent import resolve as read_intent
from demo_model.planner import next_calls
from demo_model.wire import encode_reply
from streaming.messages.accumulator import MessageAccumulator
from streaming.wire.sse import iter_json_events
from tests.conftest import make_user
from tests.demo_model.conftest import AMOUNT, DEMO_DAY, Demo, Seeded
from tests.demo_model.test_corpus import BEYOND, FOREIGN, SUPPORTED
from tools.finance.cites import txns_source
from tools.finance.sources import resolve

NO_FIGURES = {  # an honest "I don't see any", or a chart (its bars cite their rows)
    "What did I spend on flights last year?",
    "Show my spending by month this year as a chart",
    "Chart my spending by category last month",
    "Plot my groceries spending this year",
    "Graph income vs spending this year",
    "Did I spend more at Starbucks in August than in July?",
    "Unicorns this month vs last month",
}
# A recurring series is cited by its rows' ids (tools/finance/recurring.py).
SERIES = "txns:ids="
# Beyond the corpus: comparisons of a subject with refunds taken off (at a merchant, of a category).
MORE = ["Did I spend more at Amazon in August than in July?", "Travel in March vs February"]
_A = r"\d[\d,]*\.\d+ [A-Z]{3}"
# The only amounts an answer states uncited, found by their words: no rows add up to them.
UNCITED = {
    re.compile(rf"\b(?:up|down) ({_A})"): "a change: the difference of two cited figures",
    re.compile(rf"({_A}) (?:left|over)\b"): "a budget's rest: its cited limit less its spending",
    re.compile(rf"\babout \**-?({_A})"): "an estimate: charges scaled to a month, a varying "
    "charge's recent average, a projected total",
    re.compile(r"(?<![\d,.])(0\.00 [A-Z]{3})"): "nothing: no rows to cite",
    re.compile(rf"\*\*({_A}) a month\*\* on average"): "an average: cited months over their count",
    re.compile(rf"\bnet -?({_A})"): "a difference: the cited money in less the cited money out",
    re.compile(rf"\b(?:up|down) from ({_A})"): "a former price: an earlier charge of the series",
    re.compile(rf"expected on \S+: \*\*-?({_A})"): "a projection: the cited balance, pending "
    "rows and series",
    re.compile(rf"\bIn all ({_A})"): "a sum: the cited payments due, added up",
}


@pytest.fixture(scope="module")
def stranger(year: Seeded) -> int:
    """Another user of the same database, with data of their own."""
    user_id = make_user(year.db, "stranger")[0]
    seed_finance(year.db, user_id, today=year.today)
    return user_id


def search_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the request's search_result blocks in the order the API numbers them."""
    out = []
    for message in messages:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                out += [b for b in block["content"] if b.get("type") == "search_result"]
    return out


def rows_total(rows: list[dict[str, Any]], currency: str) -> Decimal:
    """Return what resolved rows add up to in one currency, by their kind."""
    total = Decimal(0)
    for row in rows:
        if row.get("currency") != currency:
            continue
        if "limit" in row:  # a budget: its limit
            total += Decimal(row["limit"])
        elif "balance" in row:  # an account
            total += Decimal(row["balance"])
        else:
            total += Decimal(row["amount"])
    return abs(total)


def check_cited_answer(seeded: Seeded, demo: Demo, stranger: int) -> int:
    """Check every cited block of the last answer; return how many there were."""
    *request, answer = demo.messages
    numbered = search_results(request)
    cited = [b for b in answer["content"] if b["type"] == "text" and b.get("citations")]
    for block in cited:
        amounts = AMOUNT.findall(block["text"])
        assert len(amounts) == 1, f"one figure per cited sentence: {block['text']!r}"
        figure, currency = Decimal(amounts[0][0].replace(",", "")), amounts[0][1]
        rows: dict[tuple[str, int], dict[str, Any]] = {}
        for c in block["citations"]:
            result = numbered[c["search_result_index"]]
            assert (c["source"], c["title"]) == (result["source"], result["title"])
            texts = result["content"][c["start_block_index"] : c["end_block_index"]]
            assert c["cited_text"] == "".join(t["text"] for t in texts) != ""
            assert c["type"] == "search_result_location"
            mine = resolve(seeded.db, seeded.user_id, c["source"])
            assert mine, c["source"]
            theirs = resolve(seeded.db, stranger, c["source"])
            if c["source"].startswith("txns:"):
                assert not {r["id"] for r in mine} & {r["id"] for r in theirs or []}
            else:
                assert theirs is None, c["source"]
            kind = c["source"].split(":")[0]
            rows.update({(kind, r["id"]): r for r in mine})
        sources = [c["source"] for c in block["citations"]]
        if all(source.startswith(SERIES) for source in sources):
            # A recurring series' figure is its latest charge (the next one is expected alike).
            latest = max(rows.values(), key=lambda r: (r["date"], r["id"]))
            assert abs(Decimal(latest["amount"])) == figure, block
            continue
        assert rows_total(list(rows.values()), currency) == figure, block
    return len(cited)


def uncited(demo: Demo) -> dict[str, list[str]]:
    """Return the amounts the last answer states outside cited blocks, by the exception they
    are ("" for none)."""
    found: dict[str, list[str]] = defaultdict(list)
    for block in demo.messages[-1]["content"]:
        if block["type"] != "text" or block.get("citations"):
            continue
        text = block["text"]
        excused = {m.span(1): why for rx, why in UNCITED.items() for m in rx.finditer(text)}
        for m in AMOUNT.finditer(text):
            found[excused.get(m.span(), "")].append(m.group())
    return found


@pytest.mark.parametrize("question", [c.question for c in SUPPORTED] + MORE)
def test_each_cited_figure_rests_on_rows_that_add_up_to_it(
    year: Seeded, stranger: int, question: str
) -> None:
    demo = year.demo()
    demo.ask(question)
    cited = check_cited_answer(year, demo, stranger)
    if question not in NO_FIGURES:
        assert cited, "an answer stating figures cites them"
    assert not uncited(demo)[""], "every other amount is a documented exception"


def test_every_documented_exception_is_needed(year: Seeded) -> None:
    used: set[str] = set()
    for question in [c.question for c in SUPPORTED] + MORE:
        demo = year.demo()
        demo.ask(question)
        used |= set(uncited(demo))
    assert used - {""} == set(UNCITED.values())


def test_refunds_of_a_merchant_that_also_pays_in_ask_for_the_refunds_alone() -> None:
    intent = read_intent(["Show my Acme refunds this year"], DEMO_DAY)

    def summary(key: str) -> dict[str, Any]:
        group = {"key": key, "spent": "10.00", "count": 1}
        return {"currencies": [{"currency": "USD", "groups": [group]}]}

    results: list[Any] = [
        (*calls.by_category(intent.period), summary("Shopping")),
        (*calls.by_merchant(intent.period), summary("Acme Store")),
    ]
    (call,) = next_calls(intent, results)
    # The money rule picks the refunds: the merchant's salary paid in is never among them.
    assert call[1]["flow"] == "refund" and call[1]["merchant"] == "Acme Store"
    rows = [{"id": 7, "amount": "30.00", "currency": "USD", "category": "Shopping"}]
    totals = [{"currency": "USD", "money_in": "30.00", "count": 1}]
    results.append((*call, {"transactions": rows, "totals": totals, "has_more": False}))
    answer = refunds(intent, results)
    total = next(p for p in answer if isinstance(p, Cite) and "back" in p.text)
    assert total.text == "**30.00 USD** back"
    assert total.refs == (txns_source(call[1]),)


def test_a_follow_up_numbers_search_results_across_the_whole_request(
    year: Seeded, stranger: int
) -> None:
    demo = year.demo()
    demo.ask("What did I spend on groceries last month?")
    first = len(search_results(demo.messages))
    demo.ask("And the month before?")
    assert check_cited_answer(year, demo, stranger)
    answer = demo.messages[-1]["content"]
    indexes = [c["search_result_index"] for b in answer for c in b.get("citations") or []]
    assert min(indexes) >= first, "it cites this turn's results, counted after the earlier ones"


@pytest.mark.parametrize("question", BEYOND + [q for q, _ in FOREIGN])
def test_an_honest_answer_cites_nothing(year: Seeded, question: str) -> None:
    demo = year.demo()
    demo.ask("What are my account balances?")  # results to cite are in the request
    turn = demo.ask(question)
    assert [b["type"] for b in turn.replies[-1]] == ["text"]
    assert "citations" not in turn.replies[-1][0]


def test_a_result_left_out_of_the_request_is_not_cited(year: Seeded) -> None:
    demo = year.demo()
    demo.ask("What are my account balances?")
    for message in demo.messages:  # as if trimming had shortened the results
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                block["content"] = block["content"][:1]
    demo.messages.pop()
    reply = respond(demo.body())
    assert [b.get("citations") for b in reply.blocks] == [None]


def test_search_results_are_numbered_in_request_order() -> None:
    def result(source: str) -> dict[str, Any]:
        text = [{"type": "text", "text": source}]
        return {"type": "search_result", "source": source, "title": source, "content": text}

    messages = [
        {"role": "user", "content": [result("a"), {"type": "text", "text": "q"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "x"}]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t", "content": [result("b"), result("a")]}
            ],
        },
    ]
    found = SearchResults(messages)
    cited = found.citations(["b", "a"]) or []
    assert [(c["source"], c["search_result_index"]) for c in cited] == [("b", 1), ("a", 2)]
    assert [c["cited_text"] for c in cited] == ["b", "a"]
    assert found.citations(["b", "missing"]) is None


def test_the_wire_streams_citations_before_the_text_and_they_accumulate_back(
    year: Seeded,
) -> None:
    demo = year.demo()
    demo.ask("What did I spend on groceries last month?")
    blocks = demo.messages[-1]["content"]
    chunks = encode_reply("msg_x", "demo", blocks, "end_turn", 10, random.Random(1))
    acc = MessageAccumulator()
    kinds: dict[int, list[str]] = defaultdict(list)
    for event in iter_json_events(list(chunks)):
        acc.feed(event)
        if event["type"] == "content_block_delta":
            kinds[event["index"]].append(event["delta"]["type"])
    assert acc.message()["content"] == blocks
    for index, block in enumerate(blocks):
        cited = ["citations_delta"] * len(block.get("citations") or [])
        assert kinds[index][: len(cited)] == cited
        assert set(kinds[index][len(cited) :]) == {"text_delta"}
