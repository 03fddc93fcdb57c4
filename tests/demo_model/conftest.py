"""Run the demo model like the engine does, with the real tools, and read figures out of answers."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from demo_data import seed_finance
from demo_model.brain import LABEL, respond
from engine.upstream.conversation import DATE_NOTE, SYSTEM_PROMPT
from models.db import Database
from tests.conftest import make_user
from tests.tools.conftest import (
    ALICE_ACCOUNTS,
    ALICE_BUDGETS,
    ALICE_CATEGORIES,
    ALICE_ROWS,
    insert_ledger,
)
from tools.finance import FINANCE_TOOLS
from tools.finance.clock import pinned_today
from tools.registry import ToolContext, ToolRegistry

# A year of demo data ending here puts the trip abroad (EUR, with a hotel refund) in March 2025.
DEMO_DAY = date(2025, 9, 20)
LEDGER_DAY = date(2025, 3, 15)  # the hand-built ledger of tests/tools
AMOUNT = re.compile(r"(\d[\d,]*\.\d+) ([A-Z]{3})\b")


@dataclass
class Turn:
    """One answered question: the answer's text, every tool call with its result, the replies."""

    text: str
    calls: list[tuple[str, dict[str, Any], Any]]
    replies: list[list[dict[str, Any]]] = field(default_factory=list)

    def cited(self) -> list[dict[str, Any]]:
        """Return the answer's text blocks that carry citations."""
        return [b for b in self.replies[-1] if b["type"] == "text" and b.get("citations")]

    def amounts(self) -> list[tuple[Decimal, str]]:
        """Return every amount the answer quotes, with its currency."""
        return [(Decimal(a.replace(",", "")), cur) for a, cur in AMOUNT.findall(self.text)]

    def results(self, name: str) -> list[Any]:
        """Return the results of the calls to one tool, in call order."""
        return [r for n, _, r in self.calls if n == name]


class Demo:
    """A conversation with the demo model; tools run for one user through the real registry."""

    def __init__(self, db: Database, user_id: int, today: date) -> None:
        self.registry = ToolRegistry(FINANCE_TOOLS)
        self.ctx = ToolContext(user_id, db)
        self.today = today
        self.messages: list[dict[str, Any]] = []

    def body(self) -> dict[str, Any]:
        """Return the request the engine would send now: the date told in a system message
        after the first question, thinking summarized (so its text can be read)."""
        note = {"type": "text", "text": DATE_NOTE.format(today=self.today.isoformat())}
        messages = json.loads(json.dumps(self.messages))
        messages.insert(1, {"role": "system", "content": [note]})
        return {
            "model": LABEL,
            "max_tokens": 4096,
            "stream": True,
            "system": [{"type": "text", "text": SYSTEM_PROMPT}],
            "tools": self.registry.definitions(),
            "thinking": {"type": "adaptive", "display": "summarized"},
            "messages": messages,
        }

    def ask(self, question: str) -> Turn:
        """Ask one question in this conversation and run tool rounds until the answer."""
        self.messages.append({"role": "user", "content": question})
        turn = Turn("", [])
        for _ in range(10):
            reply = respond(self.body())
            turn.replies.append(reply.blocks)
            self.messages.append({"role": "assistant", "content": reply.blocks})
            if reply.stop_reason != "tool_use":
                turn.text = "".join(b["text"] for b in reply.blocks if b["type"] == "text")
                return turn
            results = []
            for block in reply.blocks:
                if block["type"] != "tool_use":
                    continue
                with pinned_today(self.today):
                    out = self.registry.execute(block["name"], block["input"], self.ctx)
                assert not out.is_error, out.content
                turn.calls.append((block["name"], block["input"], json.loads(out.content)))
                results.append(
                    {"type": "tool_result", "tool_use_id": block["id"], "content": out.blocks()}
                )
            self.messages.append({"role": "user", "content": results})
        raise AssertionError("the demo model never answered")


class Tools:
    """Calls a tool directly for the same user and day: the oracle the answers are checked by."""

    def __init__(self, db: Database, user_id: int, today: date) -> None:
        self.registry = ToolRegistry(FINANCE_TOOLS)
        self.ctx = ToolContext(user_id, db)
        self.today = today

    def __call__(self, name: str, **tool_input: Any) -> dict[str, Any]:
        """Run a tool that must succeed and return its decoded result."""
        with pinned_today(self.today):
            out = self.registry.execute(name, tool_input, self.ctx)
        assert not out.is_error, out.content
        return json.loads(out.content)


def figures(result: Any, currency: str | None = None) -> set[tuple[Decimal, str]]:
    """Return every (absolute amount, currency) a tool result states, currencies inherited."""
    found: set[tuple[Decimal, str]] = set()
    if isinstance(result, dict):
        currency = result.get("currency", currency)
        for value in result.values():
            if isinstance(value, str) and currency and re.fullmatch(r"-?\d+\.\d+", value):
                found.add((abs(Decimal(value)), currency))
            else:
                found |= figures(value, currency)
    elif isinstance(result, list):
        for item in result:
            found |= figures(item, currency)
    return found


def money(value: str, currency: str) -> str:
    """Return a tool amount the way answers write it: unsigned, thousands separated."""
    whole, _, cents = value.lstrip("-").partition(".")
    return f"{int(whole):,}.{cents} {currency}"


@dataclass(frozen=True)
class Seeded:
    """A database with one user's data, and the day it is seen from."""

    db: Database
    user_id: int
    today: date

    def demo(self) -> Demo:
        """Return a new conversation for this user."""
        return Demo(self.db, self.user_id, self.today)

    def tools(self) -> Tools:
        """Return the tool oracle for this user."""
        return Tools(self.db, self.user_id, self.today)


def _database(template: Path, folder: Path) -> Database:
    path = folder / "demo.db"
    shutil.copy(template, path)
    return Database(f"sqlite:///{path}")


@pytest.fixture(scope="module")
def year(migrated_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seeded]:
    """A year of generated demo data (USD at home, a EUR trip in March) seen on DEMO_DAY."""
    db = _database(migrated_template, tmp_path_factory.mktemp("year"))
    user_id = make_user(db, "demo")[0]
    seed_finance(db, user_id, today=DEMO_DAY)
    yield Seeded(db, user_id, DEMO_DAY)
    db.dispose()


@pytest.fixture(scope="module")
def small_ledger(
    migrated_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Seeded]:
    """The small hand-built ledger of tests/tools, with EUR and USD restaurants each month."""
    db = _database(migrated_template, tmp_path_factory.mktemp("ledger"))
    user_id = make_user(db, "alice")[0]
    insert_ledger(db, user_id, ALICE_ACCOUNTS, ALICE_CATEGORIES, ALICE_ROWS, ALICE_BUDGETS)
    yield Seeded(db, user_id, LEDGER_DAY)
    db.dispose()


@pytest.fixture(scope="module")
def empty(migrated_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seeded]:
    """A user with no accounts, transactions or budgets."""
    db = _database(migrated_template, tmp_path_factory.mktemp("empty"))
    yield Seeded(db, make_user(db, "newcomer")[0], DEMO_DAY)
    db.dispose()
