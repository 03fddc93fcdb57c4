"""Decide the demo model's next message from a Messages API request body."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from demo_model import tool_calls as calls
from demo_model.answers import compose_cited
from demo_model.answers.honest import HELP
from demo_model.binding import sign_reply
from demo_model.cite import Answer, Part, SearchResults, text_blocks
from demo_model.intent import Intent, resolve
from demo_model.periods import settle
from demo_model.planner import next_calls
from demo_model.reading import question_indexes, results_since, rounds_since, text_of, today_of
from demo_model.tool_calls import Call, Results
from tools.finance.clock import today as clock_today

LABEL = "offline demo model"
# The displays under which the notes between tool calls come back as text.
NOTES = ("updates", "summarized")
MAX_ROUNDS = 6  # a guard: every plan needs at most four rounds of tool calls
NO_TOOLS = (
    "I need the finance tools to answer that, but this request offers none of the ones I use, "
    "so I can't look at your data."
)


@dataclass(frozen=True)
class Reply:
    """The blocks and stop reason of one assistant message."""

    blocks: list[dict[str, Any]]
    stop_reason: str


def respond(body: dict[str, Any], today: date | None = None) -> Reply:
    """Return the next assistant message for this request: tool calls or the answer."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    asked = question_indexes(messages)
    if not asked:
        return _answer(HELP, messages)
    start = asked[-1]
    today = today or today_of(body) or clock_today()
    question = text_of(messages[start])
    intent = resolve([text_of(messages[i]) for i in asked], today)
    results = results_since(messages, start)
    rounds = rounds_since(messages, start)
    intent, history = settled(intent, results, today)
    wanted = (history or next_calls(intent, results)) if rounds < MAX_ROUNDS else []
    loaded, deferred, search = offered_tools(body, messages)
    calls = [(name, args) for name, args in wanted if name in loaded or name in deferred]
    if wanted and not calls:
        return _answer(NO_TOOLS, messages)
    if not calls:
        return _answer(compose_cited(intent, results), messages)
    digest = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()[:16]
    display = display_of(body)
    names = [n for n, _ in calls]
    blocks: list[dict[str, Any]] = []
    if rounds == 0:
        # Up-front thinking: its summary only with `display: "summarized"`.
        thought = _thought(question, intent, names) if display == "summarized" else ""
        blocks.append(_thinking(thought))
    # The short note a model of today writes before its tool calls comes back as a thinking
    # block: its text with `updates` or `summarized`, empty when omitted.
    note = progress_note(names, len(results)) if display in NOTES else ""
    blocks.append(_thinking(note))
    hidden = [name for name, _ in calls if name not in loaded]
    if hidden and search:
        blocks += _tool_search(hidden, digest)
    blocks += [
        {"type": "tool_use", "id": f"toolu_demo_{digest}_{k}", "name": name, "input": args}
        for k, (name, args) in enumerate(calls)
    ]
    return Reply(sign_reply(body, blocks), "tool_use")


def display_of(body: dict[str, Any]) -> str:
    """The request's `thinking.display`; a model of today omits thinking text by default."""
    thinking = body.get("thinking")
    display = thinking.get("display") if isinstance(thinking, dict) else None
    return display if display in ("summarized", "omitted", "updates") else "omitted"


# A tool named with one of these verbs changes the user's records (and waits for their
# approval): the note asks for it rather than saying it looks something up.
CHANGES = ("set", "categorize")


def progress_note(tools: list[str], results: int) -> str:
    """What the model says it does next, between its tool calls."""
    doings = [(name, _doing(name)) for name in tools]
    lookups = [_label(name) for name, doing in doings if doing is None]
    others = [doing for _, doing in doings if doing]
    what = " and ".join(([f"looking up {', '.join(lookups)}"] if lookups else []) + others)
    if not results:
        return f"{what[:1].upper()}{what[1:]}."
    got = f"{results} result{'s' if results != 1 else ''}"
    return f"Read {got}; now {what}."


def _doing(tool: str) -> str | None:
    """What the note says of a call that looks nothing up; None for a look-up."""
    if tool == "chart":
        return "drawing a chart"
    verb, _, rest = tool.partition("_")
    if verb in CHANGES:
        return f"asking to {verb} {rest.replace('_', ' ')}"
    return None


def _label(tool: str) -> str:
    return tool.removeprefix("get_").replace("_", " ")


def settled(intent: Intent, results: Results, today: date) -> tuple[Intent, list[Call]]:
    """Return the intent with all of the history dated, or the call that tells where it starts.

    A question naming no period covers all of the user's history: from their first transaction
    (asked for once) to today; an average, the whole months of it.
    """
    if intent.period.unit != "all":
        return intent, []
    first = calls.result_of(results, calls.first_row())
    if not isinstance(first, dict):
        return intent, [calls.first_row()]
    rows = first.get("transactions") or []
    start = date.fromisoformat(rows[0]["date"]) if rows else None
    period = settle(intent.period, start, today, whole_months=intent.kind == "average")
    return replace(intent, period=period), []


def offered_tools(
    body: dict[str, Any], messages: list[dict[str, Any]]
) -> tuple[set[str], set[str], bool]:
    """The tools the model may call now, those behind tool search, and whether it may search.

    A deferred tool (`defer_loading`) is loaded once a tool search found it; without the
    tool search tool it stays out of reach, as with the API.
    """
    tools = _in_effect(body, messages)
    search = any(str(t.get("type", "")).startswith("tool_search_tool_") for t in tools)
    found = {
        ref.get("tool_name")
        for m in messages
        for block in m.get("content") or []
        if isinstance(block, dict) and block.get("type") == "tool_search_tool_result"
        for ref in (block.get("content") or {}).get("tool_references") or []
        if isinstance(ref, dict)
    }
    loaded = {t.get("name") for t in tools if not t.get("defer_loading") or t.get("name") in found}
    deferred = (
        {t.get("name") for t in tools if t.get("defer_loading")} - loaded if search else set()
    )
    return {str(n) for n in loaded}, {str(n) for n in deferred}, search


def _in_effect(body: dict[str, Any], messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The request's `tools` with the changes its system messages made, in order: a
    `tool_addition` offers a tool (defined by value, or one of `tools` by name) from there
    on, a `tool_removal` withdraws one."""
    declared = {str(t.get("name")): t for t in body.get("tools") or [] if isinstance(t, dict)}
    tools = dict(declared)
    for message in messages:
        content = message.get("content")
        if message.get("role") != "system" or not isinstance(content, list):
            continue
        for block in content:
            tool = block.get("tool") if isinstance(block, dict) else None
            if not isinstance(tool, dict):
                continue
            definition = tool.get("definition") if tool.get("type") == "tool_definition" else None
            name = str(definition.get("name") if isinstance(definition, dict) else tool.get("name"))
            if block.get("type") == "tool_removal":
                tools.pop(name, None)
            elif isinstance(definition, dict):
                tools[name] = definition
            elif name in declared:
                tools[name] = {k: v for k, v in declared[name].items() if k != "defer_loading"}
    return list(tools.values())


def _tool_search(names: list[str], digest: str) -> list[dict[str, Any]]:
    """A server-side tool search that finds `names`, as the API writes one into a reply."""
    ident = f"srvtoolu_demo_{digest}"
    return [
        {
            "type": "server_tool_use",
            "id": ident,
            "name": "tool_search_tool_bm25",
            "input": {"query": " ".join(names)},
        },
        {
            "type": "tool_search_tool_result",
            "tool_use_id": ident,
            "content": {
                "type": "tool_search_tool_search_result",
                "tool_references": [{"type": "tool_reference", "tool_name": n} for n in names],
            },
        },
    ]


def describe(intent: Intent) -> str:
    """Return in words what the demo model understood the question to ask."""
    about = intent.subject() or dict(intent.details).get("category") or "all"
    period = intent.period.text()
    text = {
        "spending": f"{about} spending in {period}",
        "largest": f"the largest purchases ({about}) in {period}",
        "compare": (
            f"{about} spending in {period} compared with "
            f"{(intent.baseline or intent.period).text()}"
        ),
        "budget": f"budget status ({about}) for the month of {intent.period.end:%B %Y}",
        "recurring": "recurring payments over the last year",
        "balances": "account balances",
        "overview": f"an overview: balances and spending in {period}",
        "income": f"income in {period}",
        "refunds": f"refunds ({about}) in {period}",
        "set_budget": f"a change: set the {about} budget",
        "categorize": f"a change: move a transaction to {about}",
        "categorize_rows": "a change: propose categories for the uncategorized transactions",
        "in_and_out": f"money in (income) against money out (spending) in {period}",
        "pending": "transactions still pending",
        "savings_rate": f"what I kept and the savings rate (income less spending, over income) "
        f"in {period}",
        "average": f"the average month of {about} spending over {period}",
        "merchants": f"the merchants with the most spending in {period}, in each currency",
        "forecast": f"each account's balance projected to {period}, from the recurring series",
        "upcoming": f"the recurring payments due in {period}",
        "next_payment": f"when the next {about} payment comes",
        "price_changes": "which recurring payments changed price",
        "transfers": f"the money moved between your own accounts in {period}",
        "place": f"spending in a place, which the records do not carry; totals of {period}",
        "chart": f"a chart ({dict(intent.details).get('chart', '').replace('_', ' ')}) of {period}",
    }.get(intent.kind, "something I cannot help with")
    if intent.reused:
        text += f" (a follow-up: I reuse the earlier question's {'; '.join(intent.reused)})"
    return text


def _thought(question: str, intent: Intent, tools: list[str]) -> str:
    return (
        f'The user asks: "{question.strip()[:200]}". I read it as {describe(intent)}. I need '
        f"their real data, so I will call {', '.join(tools)} and answer only from the exact "
        "figures returned, keeping each currency apart."
    )


def _thinking(text: str) -> dict[str, Any]:
    """A thinking block; its signature binds it to what preceded it (sign_reply)."""
    return {"type": "thinking", "thinking": text, "signature": ""}


def _answer(answer: Answer, messages: list[dict[str, Any]]) -> Reply:
    """The answer's text blocks, its figures citing the request's search results they rest on.

    The answer is not signed: its message's model names the demo, and the page says so once.
    """
    parts: list[Part] = [answer] if isinstance(answer, str) else list(answer)
    return Reply(text_blocks(parts, SearchResults(messages)), "end_turn")
