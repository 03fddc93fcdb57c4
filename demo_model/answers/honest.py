"""Honest replies: what the demo can help with, and what to say when there is no data."""

from __future__ import annotations

from demo_model import tool_calls as c
from demo_model.answers.fmt import plural
from demo_model.mdtext import md_text
from demo_model.tool_calls import Results

CAN_DO = (
    "I can answer questions about your own money:\n"
    "- income: “How much did I earn last month?”\n"
    "- refunds: “Show my Amazon refunds”\n"
    "- spending by category, merchant or period: “What did I spend on restaurants in March?”, "
    "“How much did I spend on my trip abroad in May?”\n"
    "- comparisons: “groceries this month vs last”\n"
    "- budgets: “Am I over budget?”\n"
    "- account balances: “What are my balances?”\n"
    "- largest purchases: “What were my biggest purchases last month?”\n"
    "- subscriptions and other recurring payments: “Which subscriptions am I paying for?”, "
    "“What went up in price?”, “When is my next rent?”\n"
    "- what lies ahead: “What will my balance be on 15 January?”, “Which bills are coming "
    "up?”\n"
    "- averages and top merchants: “average monthly spending on groceries”, “Which merchant do "
    "I spend the most at?”\n"
    "- money in and out: “money in vs out in August”, “What's my savings rate?”, “How much did "
    "I save last month?”, “Do I have any pending transactions?”\n"
    "- charts: “Show my spending by month this year as a chart”\n"
    "- an overview: “How am I doing?”"
)
OFF_TOPIC = (
    "Sorry, I can't help with that: I'm the offline demo of a personal finance assistant and "
    "I only see your accounts, transactions and budgets. " + CAN_DO
)
NOT_UNDERSTOOD = (
    "I did not understand that question well enough to answer it from your data, so I won't "
    "guess: I only read your transactions, budgets and balances, and I don't give advice, "
    "predict spending or move money. " + CAN_DO
)
HELP = "Hi! I'm the offline demo of a personal finance assistant. " + CAN_DO
ENGLISH_ONLY = (
    "The offline demo understands English; with an API key Claude answers in any language."
)
IN_YOUR_LANGUAGE = {
    "es": "La demo sin conexión solo entiende inglés; con una clave de API, Claude responde en "
    "cualquier idioma. Pregunte en inglés, por ejemplo: “How much did I spend on restaurants "
    "last month?”",
    "de": "Die Offline-Demo versteht nur Englisch; mit einem API-Schlüssel antwortet Claude in "
    "jeder Sprache. Fragen Sie auf Englisch, zum Beispiel: “How much did I spend on groceries "
    "last month?”",
    "fr": "La démo hors ligne ne comprend que l'anglais ; avec une clé d'API, Claude répond dans "
    "toutes les langues. Posez votre question en anglais, par exemple : “How much did I spend "
    "on groceries last month?”",
}
NO_DATA = (
    "I don't see any accounts or transactions for you yet, so there is nothing to add up. Once "
    "your accounts are connected (in this demo, `flask --app app seed-demo <user>` loads "
    "eighteen months of sample data), ask me again."
)


def english_only(language: str | None) -> str:
    """Say, in the question's language when the demo knows it, that only English is understood."""
    local = IN_YOUR_LANGUAGE.get(language or "")
    return "\n\n".join([*([local] if local else []), ENGLISH_ONLY, CAN_DO])


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
    return f" Your most recent transaction is from {md_text(rows[0].get('date'))}."
