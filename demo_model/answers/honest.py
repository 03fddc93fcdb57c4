"""Honest replies: what the demo can help with, and what to say when there is no data."""

from __future__ import annotations

from demo_model import calls as c
from demo_model.answers.fmt import plural
from demo_model.calls import Results

CAN_DO = (
    "I can answer questions about your own money: spending by category, merchant or period "
    "(“What did I spend on restaurants last month?”), comparisons (“groceries this month vs "
    "last”), budgets, subscriptions and other recurring payments, and account balances."
)
OFF_TOPIC = (
    "Sorry, I can't help with that: I'm the offline demo of a personal finance assistant and "
    "I only see your accounts, transactions and budgets. " + CAN_DO
)
HELP = "Hi! I'm the offline demo of a personal finance assistant. " + CAN_DO
NO_DATA = (
    "I don't see any accounts or transactions for you yet, so there is nothing to add up. Once "
    "your accounts are connected (in this demo, `flask --app app seed-demo <user>` loads a "
    "sample year of data), ask me again."
)


def data_note(results: Results) -> str | None:
    """Return what the data check found when the user has no transactions, else None."""
    found = c.result_of(results, c.any_data()[0])
    accounts = c.result_of(results, c.balances())
    if not isinstance(found, dict) or found.get("count"):
        return None
    listed = accounts.get("accounts") if isinstance(accounts, dict) else None
    if not listed:
        return NO_DATA
    return (
        f"I can see your {plural(len(listed), 'account')}, but no transactions in "
        f"{'it' if len(listed) == 1 else 'them'} yet, so there is no spending to report."
    )


def latest_note(results: Results) -> str:
    """Return when the user's most recent transaction was, from the data check."""
    found = c.result_of(results, c.any_data()[0])
    rows = found.get("transactions") if isinstance(found, dict) else None
    if not rows:
        return ""
    return f" Your most recent transaction is from {rows[0].get('date')}."
