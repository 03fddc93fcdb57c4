"""Recurring-series detection on a labelled synthetic ledger: precision and recall >= 0.95.

The ledger (tests/tools/synthetic_series.py) carries each row's truth; the series are found by
find_recurring_payments through the registry, as the model calls it, and each found series is
matched to the truth by the rows it cites.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from sqlalchemy import select

from models.db import Database
from models.finance import Transaction
from tests.conftest import make_user
from tests.tools.conftest import Caller, insert_ledger
from tests.tools.synthetic_series import ACCOUNTS, END, Synth, ledger, truth
from tools.finance.clock import pinned_today
from tools.finance.sources import parse
from tools.registry import ToolOutcome

BOUND = 0.95


def seeded(db: Database, seed: int) -> tuple[Caller, list[Synth], dict[int, Synth]]:
    user_id = make_user(db, f"synthetic{seed}")[0]
    rows = ledger(seed)
    insert_ledger(
        db,
        user_id,
        ACCOUNTS,
        [],
        [
            (r.day.isoformat(), r.account, r.amount, r.currency, r.merchant, None, False)
            for r in rows
        ],
        [],
    )
    with db.read() as s:
        ids = s.scalars(
            select(Transaction.id).where(Transaction.user_id == user_id).order_by(Transaction.id)
        ).all()
    return Caller(db, user_id), rows, dict(zip(ids, rows, strict=True))


def cited_ids(outcome: ToolOutcome) -> list[list[int]]:
    """The ids of the rows each series cites, in the order the series are listed."""
    return [
        [int(i) for i in parse(block["source"])[1]["ids"].split(",")] for block in outcome.sources
    ]


def scored(
    found: list[dict[str, Any]], cited: list[list[int]], by_id: dict[int, Synth], true: set[str]
) -> dict[str, Any]:
    """Match each found series to the truth by the majority of its rows' labels."""
    matched: dict[str, dict[str, Any]] = {}
    wrong: list[str] = []
    for item, ids in zip(found, cited, strict=True):
        labels = Counter(by_id[i].series for i in ids)
        label, _ = labels.most_common(1)[0]
        if label in true and label not in matched:
            matched[label] = item
        else:
            wrong.append(f"{item['name']} ({item['cadence']}, {label})")
    precision = len(matched) / max(1, len(matched) + len(wrong))
    recall = len(matched) / len(true)
    missed = sorted(true - set(matched))
    return {
        "precision": precision,
        "recall": recall,
        "matched": matched,
        "wrong": wrong,
        "missed": missed,
    }


@pytest.mark.parametrize("seed", [38, 7, 2026])
def test_precision_and_recall_on_the_labelled_ledger(db: Database, seed: int) -> None:
    call, rows, by_id = seeded(db, seed)
    with pinned_today(END):
        outcome = call.outcome("find_recurring_payments")
    found = json.loads(outcome.content)["recurring"]
    score = scored(found, cited_ids(outcome), by_id, truth(rows))
    print(
        f"seed {seed}: {len(found)} series found, {len(truth(rows))} true; "
        f"precision {score['precision']:.3f}, recall {score['recall']:.3f}; "
        f"wrong {score['wrong']}, missed {score['missed']}"
    )
    assert score["precision"] >= BOUND, score
    assert score["recall"] >= BOUND, score


def test_what_the_series_say_on_the_labelled_ledger(db: Database) -> None:
    call, rows, by_id = seeded(db, 38)
    with pinned_today(END):
        outcome = call.outcome("find_recurring_payments")
        transfers = call("find_recurring_payments", include_transfers=True)["recurring"]
    found = json.loads(outcome.content)["recurring"]
    matched = scored(found, cited_ids(outcome), by_id, truth(rows))["matched"]
    netflix, salary, energy = matched["netflix"], matched["salary"], matched["energy"]
    assert [c["text"] for c in netflix["price_changes"]] == [
        "10.99 -> 12.99 GBP since September 2025"
    ]
    assert (
        netflix["next_expected_amount"] == "12.99" and netflix["next_expected_date"] == "2026-07-05"
    )
    assert len(netflix.get("merchant_variants", [])) >= 2  # spelled three ways
    assert salary["direction"] == "in" and salary["next_expected_amount"] == "3350.00"
    assert [c["text"] for c in salary["price_changes"]] == [
        "3200.00 -> 3350.00 GBP since October 2025"
    ]
    assert energy["amount_varies"] is True and energy["price_changes"] == []
    yearly = {k: v for k, v in matched.items() if v["cadence"] == "yearly"}
    assert set(yearly) == {"insurance", "prime", "bahncard"}
    assert yearly["insurance"]["next_expected_date"] == "2027-02-17"
    assert matched["gym"]["cadence"] == "weekly"
    assert matched["freelance"]["cadence"] == "biweekly"
    assert matched["water"]["cadence"] == "quarterly"
    # The monthly move to savings and the card's payment are transfers: listed only on request.
    moved = [t for t in transfers if t["flow"] == "transfer"]
    assert {t["name"] for t in moved} >= {"To Savings", "From Current"}
    assert not [t for t in found if t["flow"] == "transfer"]
