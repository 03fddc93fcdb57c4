"""Drafts, commits and undo in short transactions: progress another request reads, a step
whose worker died resumed or undone, undo after the user edited the rows, bank ids first."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select, update

from domain.errors import Conflict
from models import Account, StatementImport, Transaction, User, utcnow
from models.db import Database
from services.imports import commits, drafts, review, steps, undo
from services.imports.drafts import Upload, create_draft
from services.imports.duplicates import Existing, Matcher
from statements.parsed import ParsedRow
from tests.imports.conftest import Importer

# One app for the module's tests, its database emptied after each (tests/conftest.py).
pytestmark = pytest.mark.shared_app

ROWS = 25
SMALL = 4


def _csv(rows: int, first: int = 0) -> bytes:
    lines = ["Date,Payee,Amount"]
    for i in range(first, first + rows):
        day = date(2026, 1, 1) + timedelta(days=i % 300)
        lines.append(f"{day.isoformat()},Shop {i},-{i + 1}.00")
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of SMALL rows, so a small file takes several."""
    for module in (steps, drafts, commits, undo):
        monkeypatch.setattr(module, "BATCH", SMALL)


def _balance(db: Database, account_id: int) -> int:
    with db.read() as s:
        return int(s.scalar(select(Account.balance_minor).where(Account.id == account_id)) or 0)


def _item(db: Database, import_id: int) -> StatementImport:
    with db.read() as s:
        found = s.get(StatementImport, import_id)
        assert found is not None
        return found


def _stall(db: Database, import_id: int) -> None:
    """Make the step under way look as if its worker died a day ago."""
    with db.transaction() as s:
        s.execute(
            update(StatementImport)
            .where(StatementImport.id == import_id)
            .values(moved_at=utcnow() - timedelta(days=1))
        )


def _account_id(db: Database, import_id: int) -> int:
    found = _item(db, import_id).statements[0]["account_id"]
    assert found is not None
    return int(found)


def _count(db: Database, import_id: int) -> int:
    with db.read() as s:
        query = select(func.count()).where(Transaction.import_id == import_id)
        return int(s.scalar(query) or 0)


@pytest.mark.usefixtures("small_batches")
def test_a_draft_is_written_in_batches_its_progress_read_meanwhile(
    db: Database, user: tuple[int, str]
) -> None:
    seen: list[tuple[int, int, str, int]] = []

    def progress(done: int, total: int) -> None:
        # Between batches no write lock is held: another user's write goes through at once
        # (the writer queue is not reentrant, so this would wait out store_lock and fail).
        with db.transaction() as s:
            s.add(User(name=f"other-{done}"))
        with db.read() as s:  # what another request reads meanwhile
            item = s.scalar(select(StatementImport).order_by(StatementImport.id.desc()))
            assert item is not None
            shown = review.summary(s, item, 60.0)
        seen.append((done, total, shown["status"], shown["progress"]["done"]))

    upload = Upload(_csv(ROWS), "big.csv", currency="EUR", account_name="Giro")
    draft = create_draft(db, user[0], upload, progress)
    assert seen[:3] == [
        (4, ROWS, "drafting", 4),
        (8, ROWS, "drafting", 8),
        (12, ROWS, "drafting", 12),
    ]
    assert seen[-1] == (ROWS, ROWS, "drafting", ROWS)
    shown = review.show(db, user[0], draft)
    assert shown["status"] == "draft" and shown["counts"]["new"] == ROWS
    assert shown["progress"] == {"done": ROWS, "total": ROWS, "stalled": False}

    ticks: list[tuple[int, int]] = []
    assert commits.commit(db, user[0], draft, lambda d, t: ticks.append((d, t))) == ROWS
    assert ticks[0] == (4, ROWS) and ticks[-1] == (ROWS, ROWS)
    assert _balance(db, _account_id(db, draft)) == -sum(range(1, ROWS + 1)) * 100
    assert undo.undo(db, user[0], draft) == ("undone", ROWS)
    assert _balance(db, _account_id(db, draft)) == 0 and _count(db, draft) == 0


@pytest.mark.usefixtures("small_batches")
def test_a_commit_whose_worker_died_is_busy_then_resumed_without_doubles(
    db: Database, user: tuple[int, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    upload = Upload(_csv(ROWS), "big.csv", currency="EUR", account_name="Giro")
    draft = create_draft(db, user[0], upload)
    real, calls = commits._add_batch, []

    def dies(*args: Any) -> Any:
        calls.append(1)
        if len(calls) > 2:
            raise RuntimeError("the worker died")
        return real(*args)

    monkeypatch.setattr(commits, "_add_batch", dies)
    with pytest.raises(RuntimeError):
        commits.commit(db, user[0], draft)
    monkeypatch.setattr(commits, "_add_batch", real)
    item = _item(db, draft)
    assert (item.status, item.rows_done, item.rows_total) == ("committing", 2 * SMALL, ROWS)
    assert _count(db, draft) == 2 * SMALL
    account = _account_id(db, draft)
    assert _balance(db, account) == -sum(range(1, 2 * SMALL + 1)) * 100  # agrees with its rows

    with pytest.raises(Conflict) as busy:  # it may still be running
        commits.commit(db, user[0], draft)
    assert busy.value.code == "import_busy"
    with pytest.raises(Conflict):
        undo.undo(db, user[0], draft)

    _stall(db, draft)
    assert review.show(db, user[0], draft)["progress"]["stalled"] is True
    assert commits.commit(db, user[0], draft) == ROWS
    assert _count(db, draft) == ROWS
    assert _balance(db, account) == -sum(range(1, ROWS + 1)) * 100
    assert _item(db, draft).status == "committed"


@pytest.mark.usefixtures("small_batches")
def test_a_stalled_commit_or_undo_is_undone_by_delete(
    db: Database, user: tuple[int, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    upload = Upload(_csv(ROWS), "big.csv", currency="EUR", account_name="Giro")
    draft = create_draft(db, user[0], upload)
    real = commits._settle
    monkeypatch.setattr(commits, "_settle", lambda *a: (_ for _ in ()).throw(RuntimeError()))
    with pytest.raises(RuntimeError):
        commits.commit(db, user[0], draft)
    monkeypatch.setattr(commits, "_settle", real)
    account = _account_id(db, draft)
    assert _count(db, draft) == ROWS and _item(db, draft).status == "committing"

    real_delete, calls = undo._delete_batch, []

    def dies(*args: Any) -> bool:
        calls.append(1)
        if len(calls) > 3:
            raise RuntimeError("the worker died")
        return real_delete(*args)

    _stall(db, draft)
    monkeypatch.setattr(undo, "_delete_batch", dies)
    with pytest.raises(RuntimeError):
        undo.undo(db, user[0], draft)
    monkeypatch.setattr(undo, "_delete_batch", real_delete)
    item = _item(db, draft)
    assert (item.status, item.rows_done) == ("undoing", 3 * SMALL)
    left = -sum(range(3 * SMALL + 1, ROWS + 1)) * 100
    assert _balance(db, account) == left  # the balance agrees with the rows left
    _stall(db, draft)
    assert undo.undo(db, user[0], draft) == ("undone", ROWS)
    assert _count(db, draft) == 0 and _balance(db, account) == 0


@pytest.mark.usefixtures("small_batches")
def test_a_draft_whose_worker_died_is_discarded_by_delete(
    db: Database, user: tuple[int, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real, calls = drafts.Store.write, []

    def dies(self: drafts.Store, batch: list[dict[str, Any]], done: int) -> int:
        calls.append(1)
        if len(calls) > 2:
            raise RuntimeError("the worker died")
        return real(self, batch, done)

    monkeypatch.setattr(drafts.Store, "write", dies)
    monkeypatch.setattr(drafts, "discard_rows", lambda *a: None)  # died: nothing cleans up
    with pytest.raises(RuntimeError):
        create_draft(db, user[0], Upload(_csv(ROWS), "big.csv", currency="EUR"))
    monkeypatch.undo()
    for module in (steps, drafts, commits, undo):
        monkeypatch.setattr(module, "BATCH", SMALL)
    with db.read() as s:
        draft = s.scalar(select(StatementImport.id))
    assert draft is not None and _item(db, draft).status == "drafting"
    with pytest.raises(Conflict):
        commits.commit(db, user[0], draft)
    with pytest.raises(Conflict):
        undo.undo(db, user[0], draft)
    _stall(db, draft)
    assert undo.undo(db, user[0], draft) == ("discarded", 0)
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(StatementImport)) == 0


def test_a_failed_draft_stores_nothing(
    db: Database, user: tuple[int, str], monkeypatch: Any
) -> None:
    def fails(self: drafts.Store, batch: list[dict[str, Any]], done: int) -> int:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(drafts.Store, "write", fails)
    with pytest.raises(RuntimeError):
        create_draft(db, user[0], Upload(_csv(ROWS), "big.csv", currency="EUR"))
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(StatementImport)) == 0


def test_undo_after_the_user_edited_the_rows_leaves_the_balance_the_rest_says(
    importer: Importer,
) -> None:
    # The case: an imported row edited from -100.00 to -600.00, then the import
    # undone, left -500.00 in an account with no rows.
    data = b"Date,Payee,Amount\n2026-03-01,Bakery,-100.00\n2026-03-02,Cafe,-20.00\n"
    draft = importer.upload("edited.csv", data, currency="EUR", account_name="Giro").json
    importer.commit(draft["id"])
    account = importer.get(f"/api/imports/{draft['id']}").json["accounts"][0]["account_id"]
    found = {t["merchant"]: t for t in importer.transactions()}
    edited = importer.client.patch(
        f"/api/transactions/{found['Bakery']['id']}",
        json={"amount": "-600.00"},
        headers=importer.headers,
    )
    assert edited.status_code == 200, edited.json
    gone = importer.client.delete(
        f"/api/transactions/{found['Cafe']['id']}", headers=importer.headers
    )
    assert gone.status_code == 204
    assert importer.get(f"/api/accounts/{account}").json["balance"] == "-600.00"
    by_hand = importer.client.post(
        "/api/transactions",
        json={"account_id": account, "date": "2026-03-05", "amount": "-7.00", "merchant": "Kiosk"},
        headers=importer.headers,
    )
    assert by_hand.status_code == 201, by_hand.json

    undone = importer.delete(draft["id"]).json
    assert undone["removed_transactions"] == 1
    left = importer.transactions()
    assert [t["merchant"] for t in left] == ["Kiosk"]
    assert importer.get(f"/api/accounts/{account}").json["balance"] == "-7.00"


def test_undo_takes_back_a_closing_balance_beyond_the_rows(importer: Importer) -> None:
    made = importer.client.post(
        "/api/accounts",
        json={"name": "Giro", "kind": "checking", "currency": "EUR", "balance": "100.00"},
        headers=importer.headers,
    )
    account = made.json["id"]
    mt940 = (
        b":20:X\n:25:DE89370400440532013000\n:28C:1\n:60F:C260301EUR1000,00\n"
        b":61:2603020302D50,00NMSCNONREF\n:86:Bakery\n:62F:C260302EUR900,00\n-\n"
    )
    draft = importer.upload("s.sta", mt940, account_id=account).json
    assert importer.commit(draft["id"]).json["added"] == 1
    assert importer.get(f"/api/accounts/{account}").json["balance"] == "900.00"
    importer.delete(draft["id"])
    assert importer.get(f"/api/accounts/{account}").json["balance"] == "100.00"


def test_a_row_carrying_a_stored_bank_id_is_never_new() -> None:
    # The case in 10,000 rows: before each row carrying a stored bank id, a row
    # without one that looks just like it (same date, amount and payee).
    day = date(2026, 1, 1)
    stored = [
        Existing(i, day + timedelta(days=i % 90), -(i % 37) - 1, f"Shop {i % 11}", "", f"F{i}")
        for i in range(1, 5001)
    ]
    rows: list[ParsedRow] = []
    for e in stored:
        rows.append(ParsedRow(len(rows) + 1, e.posted_on, e.amount_minor, e.merchant))
        rows.append(
            ParsedRow(len(rows) + 1, e.posted_on, e.amount_minor, e.merchant, bank_id=e.bank_id)
        )
    matcher = Matcher(stored)
    verdicts = [matcher.classify(r) for r in rows]
    carrying = [(v.status, v.matched) for r, v in zip(rows, verdicts, strict=True) if r.bank_id]
    assert len(carrying) == 5000
    assert carrying == [("duplicate", e.id) for e in stored]
    lookalikes = {v.status for r, v in zip(rows, verdicts, strict=True) if not r.bank_id}
    assert lookalikes == {"possible_duplicate"}  # left to review
