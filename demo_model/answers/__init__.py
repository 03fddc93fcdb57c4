"""Write the demo model's final answer from the tool results it received."""

from __future__ import annotations

from collections.abc import Callable

from demo_model.answers.ahead import forecast, next_payment, price_changes, transfers, upcoming
from demo_model.answers.averages import average, merchants
from demo_model.answers.categorize import categorize_rows
from demo_model.answers.change_results import change
from demo_model.answers.chart import chart
from demo_model.answers.compare import compare
from demo_model.answers.flows import in_and_out, pending, savings_rate
from demo_model.answers.fmt import lines_md
from demo_model.answers.honest import HELP, NOT_UNDERSTOOD, OFF_TOPIC, english_only
from demo_model.answers.money_in import income, refunds
from demo_model.answers.place import place
from demo_model.answers.spending import largest, spending
from demo_model.answers.standing import balances, budget, overview, recurring
from demo_model.cite import Answer, plain
from demo_model.intent import Intent
from demo_model.mdtext import md_text
from demo_model.tool_calls import Results

WRITERS: dict[str, Callable[[Intent, Results], Answer]] = {
    "spending": spending,
    "compare": compare,
    "largest": largest,
    "budget": budget,
    "recurring": recurring,
    "balances": balances,
    "overview": overview,
    "income": income,
    "refunds": refunds,
    "set_budget": change,
    "categorize": change,
    "categorize_rows": categorize_rows,
    "chart": chart,
    "in_and_out": in_and_out,
    "pending": pending,
    "savings_rate": savings_rate,
    "average": average,
    "merchants": merchants,
    "place": place,
    "forecast": forecast,
    "upcoming": upcoming,
    "next_payment": next_payment,
    "price_changes": price_changes,
    "transfers": transfers,
}
WRITE_TOOLS = ("set_budget", "categorize_transaction", "categorize_transactions")
HONEST = {"help": HELP, "unknown": NOT_UNDERSTOOD, "off_topic": OFF_TOPIC}


def compose_answer(intent: Intent, results: Results) -> str:
    """Return the answer's text, quoting only figures the tools returned, with their currency."""
    return plain(compose_cited(intent, results))


# How a call of a write tool reads when the user (or time, or a new message) said no: the
# result is an error for the model, but the answer says what the user decided.
NOT_TAKEN = ("The user declined", "Nobody approved", "The user sent a new message instead")
SAID, UNLESS = "The user said: ", " Do not take it"


def compose_cited(intent: Intent, results: Results) -> Answer:
    """Return the answer, its sentences stating figures citing the results they come from."""
    refused = not_taken(results)
    if refused is not None:
        return refused
    errors = [
        f"- {name}: {md_text(r['error'])}"
        for name, _, r in results
        if isinstance(r, dict) and "error" in r
    ]
    if errors:
        return ["I could not get all of the data I needed:\n", *lines_md(errors)]
    writer = WRITERS.get(intent.kind)
    if writer is None:
        if intent.kind == "foreign":
            return english_only(intent.language)
        return HONEST.get(intent.kind, NOT_UNDERSTOOD)
    return writer(intent, results)


def not_taken(results: Results) -> str | None:
    """What the answer says when a change the model asked for was not approved."""
    for name, _, result in results:
        error = str(result.get("error", "")) if isinstance(result, dict) else ""
        if name in WRITE_TOOLS and error.startswith(NOT_TAKEN):
            said = error.split(SAID, 1)[1].split(UNLESS, 1)[0] if SAID in error else ""
            reason = f" You said: “{md_text(said)}”." if said else ""
            if error.startswith("The user declined"):
                return f"Understood: I did not make that change.{reason}"
            if error.startswith("Nobody approved"):
                return "Nobody approved that change in time, so I did not make it."
            return "You moved on before approving that change, so I did not make it."
    return None
