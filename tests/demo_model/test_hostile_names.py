"""Names in the user's records that look like Markdown read as text in the demo's answers.

The demo year with a merchant named like a phishing link, one whose name breaks the line into a
heading, and an account, a category and a subscription named with markup: every answer that
shows them renders them as their own text, with no link, heading, HTML or other node of theirs,
and the figures they sit in are still cited.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from demo_data import seed_finance
from models import Account, Category, Transaction
from models.db import Database
from tests.conftest import make_user
from tests.demo_model.conftest import DEMO_DAY, Seeded
from tests.demo_model.test_mdtext import MD, shown

LINK = "[Verify your card now](https://evil.example/login)"
HEADING = "Safeway\n# Your account is locked"
ACCOUNT = "Rewards <b>Visa</b> **now**"
CATEGORY = "Groceries ![x](https://evil.example/x.png)"
SUBSCRIPTION = "Netflix`s <https://evil.example> ~~plan~~"
# Nodes an answer's own Markdown never makes: any of them came from the data.
FOREIGN = {
    "link_open",
    "image",
    "heading_open",
    "html_inline",
    "html_block",
    "code_inline",
    "code_block",
    "fence",
    "blockquote_open",
    "hr",
    "s_open",
    "table_open",
    "ordered_list_open",
}


@pytest.fixture(scope="module")
def hostile(migrated_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seeded]:
    """The demo year, its names replaced by ones that look like Markdown."""
    path = tmp_path_factory.mktemp("hostile") / "demo.db"
    shutil.copy(migrated_template, path)
    db = Database(f"sqlite:///{path}")
    user_id = make_user(db, "demo")[0]
    seed_finance(db, user_id, today=DEMO_DAY)
    with db.transaction() as s:
        for old, new in (
            ("Whole Foods Market", LINK),
            ("Safeway", HEADING),
            ("Netflix", SUBSCRIPTION),
        ):
            s.execute(update(Transaction).where(Transaction.merchant == old).values(merchant=new))
        s.execute(update(Account).where(Account.name == "Rewards Visa").values(name=ACCOUNT))
        s.execute(update(Category).where(Category.name == "Groceries").values(name=CATEGORY))
    yield Seeded(db, user_id, DEMO_DAY)
    db.dispose()


def lines(text: str) -> list[str]:
    """The visible text of each inline run of a rendered answer."""
    return [
        "".join(c.content for c in t.children or [] if c.type == "text")
        for t in MD.parse(text)
        if t.type == "inline"
    ]


def nodes(text: str) -> set[str]:
    tokens = MD.parse(text)
    return {t.type for t in tokens} | {c.type for t in tokens for c in t.children or []}


def cited_with(reply: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """The answer's cited text blocks that show `name`."""
    return [
        b
        for b in reply
        if b["type"] == "text" and b.get("citations") and shown(name) in "".join(lines(b["text"]))
    ]


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("What did I spend on groceries last month?", [LINK, HEADING, CATEGORY]),
        ("What were my biggest grocery purchases this year?", [LINK]),
        ("What are my balances?", [ACCOUNT]),
        ("Which subscriptions am I paying for?", [SUBSCRIPTION]),
        ("Am I over budget on groceries?", [CATEGORY]),
        ("How am I doing?", [CATEGORY, ACCOUNT]),
        ("Groceries this month vs last month", [CATEGORY]),
    ],
)
def test_names_that_look_like_markdown_read_as_text(
    hostile: Seeded, question: str, names: list[str]
) -> None:
    turn = hostile.demo().ask(question)
    assert not nodes(turn.text) & FOREIGN, turn.text
    shown_lines = lines(turn.text)
    for name in names:
        assert any(shown(name) in line for line in shown_lines), (name, turn.text)


def test_a_hostile_merchants_figure_is_cited_as_its_own_text(hostile: Seeded) -> None:
    turn = hostile.demo().ask("What did I spend on groceries last month?")
    for name in (LINK, HEADING):
        blocks = cited_with(turn.replies[-1], name)
        assert blocks, f"no cited figure shows {name!r}: {turn.text}"
        for block in blocks:
            assert not nodes(block["text"]) & FOREIGN
            assert all(c["source"].startswith("txn:") for c in block["citations"])
